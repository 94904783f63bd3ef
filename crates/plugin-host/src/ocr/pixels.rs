//! Pixel work the OCR engine does before Tesseract sees a page: turn it by
//! quarter turns (a page scanned sideways), level a slight skew, enlarge
//! small text, even out uneven light (a photographed page) — and the
//! affine map that brings every box found in the result back to the
//! pixels of the image the plugin gave.
//!
//! Plain Rust on 8-bit gray rows, no image library: each step costs a few
//! milliseconds per megapixel, against the seconds recognition takes.

use super::GrayImage;

/// An affine map of points `(x, y) → (a·x + b·y + c, d·x + e·y + f)`, here
/// always from a transformed image's coordinates back to its source's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Affine {
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub d: f64,
    pub e: f64,
    pub f: f64,
}

impl Affine {
    /// The identity.
    pub const IDENTITY: Affine = Affine {
        a: 1.0,
        b: 0.0,
        c: 0.0,
        d: 0.0,
        e: 1.0,
        f: 0.0,
    };

    /// Map one point.
    pub fn apply(&self, x: f64, y: f64) -> (f64, f64) {
        (
            self.a * x + self.b * y + self.c,
            self.d * x + self.e * y + self.f,
        )
    }

    /// `self ∘ inner`: first `inner`, then `self`. With `inner` mapping
    /// stage 2 → stage 1 and `self` stage 1 → stage 0, the result maps
    /// stage 2 → stage 0.
    pub fn then_from(&self, inner: &Affine) -> Affine {
        Affine {
            a: self.a * inner.a + self.b * inner.d,
            b: self.a * inner.b + self.b * inner.e,
            c: self.a * inner.c + self.b * inner.f + self.c,
            d: self.d * inner.a + self.e * inner.d,
            e: self.d * inner.b + self.e * inner.e,
            f: self.d * inner.c + self.e * inner.f + self.f,
        }
    }

    /// The box `[left, right) × [top, bottom)` mapped to the source: the
    /// bounding box of its four corners, clipped to `width × height`, as
    /// `(x, y, w, h)`; `None` when nothing of it is left inside.
    pub fn map_box(
        &self,
        left: f64,
        top: f64,
        right: f64,
        bottom: f64,
        width: u32,
        height: u32,
    ) -> Option<(u32, u32, u32, u32)> {
        let corners = [
            self.apply(left, top),
            self.apply(right, top),
            self.apply(left, bottom),
            self.apply(right, bottom),
        ];
        let min_x = corners.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
        let max_x = corners
            .iter()
            .map(|p| p.0)
            .fold(f64::NEG_INFINITY, f64::max);
        let min_y = corners.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let max_y = corners
            .iter()
            .map(|p| p.1)
            .fold(f64::NEG_INFINITY, f64::max);
        let x0 = min_x.round().clamp(0.0, f64::from(width));
        let x1 = max_x.round().clamp(0.0, f64::from(width));
        let y0 = min_y.round().clamp(0.0, f64::from(height));
        let y1 = max_y.round().clamp(0.0, f64::from(height));
        if x1 <= x0 || y1 <= y0 {
            return None;
        }
        // Clamped to 0..=u32::MAX above: the casts are exact.
        Some((x0 as u32, y0 as u32, (x1 - x0) as u32, (y1 - y0) as u32))
    }
}

/// `image` turned clockwise by `quarter_turns` × 90°, and the map from the
/// turned image's coordinates back to `image`'s.
pub fn turn(image: &GrayImage, quarter_turns: u32) -> (GrayImage, Affine) {
    let (w, h) = (image.width as usize, image.height as usize);
    let (wf, hf) = (f64::from(image.width), f64::from(image.height));
    let src = &image.pixels;
    match quarter_turns % 4 {
        1 => {
            // (x, y) → (h - 1 - y, x): new width h, height w.
            let mut out = vec![0u8; w * h];
            for y in 0..h {
                let row = &src[y * w..(y + 1) * w];
                let nx = h - 1 - y;
                for (x, &p) in row.iter().enumerate() {
                    out[x * h + nx] = p;
                }
            }
            let map = Affine {
                a: 0.0,
                b: 1.0,
                c: 0.0,
                d: -1.0,
                e: 0.0,
                f: hf,
            };
            (gray(image.height, image.width, out), map)
        }
        2 => {
            let mut out = src.clone();
            out.reverse();
            let map = Affine {
                a: -1.0,
                b: 0.0,
                c: wf,
                d: 0.0,
                e: -1.0,
                f: hf,
            };
            (gray(image.width, image.height, out), map)
        }
        3 => {
            // (x, y) → (y, w - 1 - x): new width h, height w.
            let mut out = vec![0u8; w * h];
            for y in 0..h {
                let row = &src[y * w..(y + 1) * w];
                for (x, &p) in row.iter().enumerate() {
                    out[(w - 1 - x) * h + y] = p;
                }
            }
            let map = Affine {
                a: 0.0,
                b: -1.0,
                c: wf,
                d: 1.0,
                e: 0.0,
                f: 0.0,
            };
            (gray(image.height, image.width, out), map)
        }
        _ => (image.clone(), Affine::IDENTITY),
    }
}

/// `image` turned counter-clockwise by `radians` about its centre onto a
/// canvas grown to hold all of it (corners white), and the map back.
pub fn rotate(image: &GrayImage, radians: f64) -> (GrayImage, Affine) {
    let (wf, hf) = (f64::from(image.width), f64::from(image.height));
    let (sin, cos) = radians.sin_cos();
    let out_w = (wf * cos.abs() + hf * sin.abs()).ceil().max(1.0);
    let out_h = (wf * sin.abs() + hf * cos.abs()).ceil().max(1.0);
    // A point p' of the output comes from R⁻¹(p' − c') + c, where R turns
    // counter-clockwise on screen (y down): R = [cos sin; −sin cos].
    let (cx, cy) = (wf / 2.0, hf / 2.0);
    let (ox, oy) = (out_w / 2.0, out_h / 2.0);
    let map = Affine {
        a: cos,
        b: -sin,
        c: cx - cos * ox + sin * oy,
        d: sin,
        e: cos,
        f: cy - sin * ox - cos * oy,
    };
    // Both sizes are at most w + h: they fit u32.
    let rotated = warp(image, out_w as u32, out_h as u32, &map);
    (rotated, map)
}

/// `image` enlarged `factor` times (bilinear), and the map back.
pub fn enlarge(image: &GrayImage, factor: f64) -> (GrayImage, Affine) {
    let out_w = (f64::from(image.width) * factor).round().max(1.0) as u32;
    let out_h = (f64::from(image.height) * factor).round().max(1.0) as u32;
    let map = Affine {
        a: 1.0 / factor,
        b: 0.0,
        c: 0.0,
        d: 0.0,
        e: 1.0 / factor,
        f: 0.0,
    };
    (warp(image, out_w, out_h, &map), map)
}

/// Resample `image` onto `out_w × out_h`: each output pixel centre mapped
/// by `map` into `image`, read bilinearly; white outside.
fn warp(image: &GrayImage, out_w: u32, out_h: u32, map: &Affine) -> GrayImage {
    let (w, h) = (image.width as usize, image.height as usize);
    let src = &image.pixels;
    let sample = |x: f64, y: f64| -> f64 {
        // Pixel centres sit at +0.5.
        let (x, y) = (x - 0.5, y - 0.5);
        let (x0, y0) = (x.floor(), y.floor());
        let (fx, fy) = (x - x0, y - y0);
        let at = |xi: f64, yi: f64| -> f64 {
            if xi < 0.0 || yi < 0.0 || xi >= w as f64 || yi >= h as f64 {
                255.0
            } else {
                f64::from(src[yi as usize * w + xi as usize])
            }
        };
        let top = at(x0, y0) * (1.0 - fx) + at(x0 + 1.0, y0) * fx;
        let bottom = at(x0, y0 + 1.0) * (1.0 - fx) + at(x0 + 1.0, y0 + 1.0) * fx;
        top * (1.0 - fy) + bottom * fy
    };
    let mut out = Vec::with_capacity(out_w as usize * out_h as usize);
    for oy in 0..out_h {
        let py = f64::from(oy) + 0.5;
        for ox in 0..out_w {
            let (sx, sy) = map.apply(f64::from(ox) + 0.5, py);
            out.push(sample(sx, sy).round().clamp(0.0, 255.0) as u8);
        }
    }
    gray(out_w, out_h, out)
}

/// Even out the light on a page: estimate the paper's brightness around
/// every pixel (the brightest values in a window wider than any stroke,
/// smoothed) and divide by it, so paper reads white everywhere and ink
/// keeps its contrast, also in a shadow. `None` when the paper is already
/// evenly white (a scan): nothing to do.
pub fn even_light(image: &GrayImage) -> Option<GrayImage> {
    let (w, h) = (image.width as usize, image.height as usize);
    // Blocks about 1/100 of the short side (at least 4 px); the paper is
    // the brightest value over ±4 blocks: a window of 9 blocks, wider than
    // the strokes of text up to headline size.
    let block = (w.min(h) / 100).max(4);
    let (bw, bh) = (w.div_ceil(block), h.div_ceil(block));
    if bw < 2 || bh < 2 {
        return None;
    }
    let mut maxes = vec![0u8; bw * bh];
    for y in 0..h {
        let row = &image.pixels[y * w..(y + 1) * w];
        let brow = &mut maxes[(y / block) * bw..(y / block + 1) * bw];
        for (bx, chunk) in row.chunks(block).enumerate() {
            let m = chunk.iter().copied().max().unwrap_or(0);
            if m > brow[bx] {
                brow[bx] = m;
            }
        }
    }
    let radius = 4;
    let paper = box_mean(&max_filter(&maxes, bw, bh, radius), bw, bh, radius);
    let (lo, hi) = paper
        .iter()
        .fold((f32::MAX, f32::MIN), |(lo, hi), &p| (lo.min(p), hi.max(p)));
    if lo >= 235.0 || hi - lo < 8.0 && lo >= 200.0 {
        return None;
    }
    let mut out = Vec::with_capacity(w * h);
    let half = block as f32 / 2.0;
    for y in 0..h {
        // Bilinear between block centres.
        let fy = ((y as f32 + 0.5 - half) / block as f32).clamp(0.0, (bh - 1) as f32);
        let y0 = fy.floor() as usize;
        let y1 = (y0 + 1).min(bh - 1);
        let ty = fy - y0 as f32;
        let row = &image.pixels[y * w..(y + 1) * w];
        for (x, &p) in row.iter().enumerate() {
            let fx = ((x as f32 + 0.5 - half) / block as f32).clamp(0.0, (bw - 1) as f32);
            let x0 = fx.floor() as usize;
            let x1 = (x0 + 1).min(bw - 1);
            let tx = fx - x0 as f32;
            let top = paper[y0 * bw + x0] * (1.0 - tx) + paper[y0 * bw + x1] * tx;
            let bottom = paper[y1 * bw + x0] * (1.0 - tx) + paper[y1 * bw + x1] * tx;
            let bg = (top * (1.0 - ty) + bottom * ty).max(32.0);
            out.push((f32::from(p) * 255.0 / bg).round().min(255.0) as u8);
        }
    }
    Some(gray(image.width, image.height, out))
}

/// Grayscale dilation: each cell the largest value within `radius` cells
/// (a square window), in two separable passes.
fn max_filter(cells: &[u8], w: usize, h: usize, radius: usize) -> Vec<u8> {
    let mut rows = vec![0u8; w * h];
    for y in 0..h {
        for x in 0..w {
            let lo = x.saturating_sub(radius);
            let hi = (x + radius).min(w - 1);
            rows[y * w + x] = cells[y * w + lo..=y * w + hi]
                .iter()
                .copied()
                .max()
                .unwrap_or(0);
        }
    }
    let mut out = vec![0u8; w * h];
    for y in 0..h {
        let lo = y.saturating_sub(radius);
        let hi = (y + radius).min(h - 1);
        for x in 0..w {
            out[y * w + x] = (lo..=hi).map(|yy| rows[yy * w + x]).max().unwrap_or(0);
        }
    }
    out
}

/// Each cell the mean within `radius` cells (a square window, cut at the
/// edges), in two separable passes.
fn box_mean(cells: &[u8], w: usize, h: usize, radius: usize) -> Vec<f32> {
    let mut rows = vec![0f32; w * h];
    for y in 0..h {
        for x in 0..w {
            let lo = x.saturating_sub(radius);
            let hi = (x + radius).min(w - 1);
            let sum: u32 = cells[y * w + lo..=y * w + hi]
                .iter()
                .map(|&v| u32::from(v))
                .sum();
            rows[y * w + x] = sum as f32 / (hi - lo + 1) as f32;
        }
    }
    let mut out = vec![0f32; w * h];
    for y in 0..h {
        let lo = y.saturating_sub(radius);
        let hi = (y + radius).min(h - 1);
        for x in 0..w {
            let sum: f32 = (lo..=hi).map(|yy| rows[yy * w + x]).sum();
            out[y * w + x] = sum / (hi - lo + 1) as f32;
        }
    }
    out
}

fn gray(width: u32, height: u32, pixels: Vec<u8>) -> GrayImage {
    GrayImage {
        width,
        height,
        pixels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 5×3 image whose pixel values are their indices.
    fn numbered() -> GrayImage {
        gray(5, 3, (0..15).collect())
    }

    #[test]
    fn quarter_turns_move_pixels_and_boxes_back() {
        let image = numbered();
        let (cw, map) = turn(&image, 1);
        assert_eq!((cw.width, cw.height), (3, 5));
        // The top-left pixel goes to the top-right corner.
        assert_eq!(cw.pixels[2], 0);
        // The bottom-left pixel goes to the top-left corner.
        assert_eq!(cw.pixels[0], 10);
        // The turned image's pixel (0, 0) is the source's (0, 2).
        assert_eq!(map.map_box(0.0, 0.0, 1.0, 1.0, 5, 3), Some((0, 2, 1, 1)));
        for turns in 0..4 {
            let (t, map) = turn(&image, turns);
            for (i, &p) in t.pixels.iter().enumerate() {
                let (x, y) = (i as u32 % t.width, i as u32 / t.width);
                let (sx, sy, _, _) = map
                    .map_box(
                        f64::from(x),
                        f64::from(y),
                        f64::from(x) + 1.0,
                        f64::from(y) + 1.0,
                        5,
                        3,
                    )
                    .expect("inside");
                assert_eq!(
                    image.pixels[(sy * 5 + sx) as usize],
                    p,
                    "turns {turns} at {x},{y}"
                );
            }
        }
        let (back, _) = turn(&turn(&image, 1).0, 3);
        assert_eq!(back, image);
        let (back, _) = turn(&turn(&image, 2).0, 2);
        assert_eq!(back, image);
    }

    #[test]
    fn maps_compose_stage_by_stage() {
        let image = gray(40, 20, vec![255; 800]);
        let (turned, to_source) = turn(&image, 3);
        let (big, to_turned) = enlarge(&turned, 2.0);
        assert_eq!((big.width, big.height), (40, 80));
        let map = to_source.then_from(&to_turned);
        // The enlarged image's full frame is the source's full frame.
        assert_eq!(
            map.map_box(0.0, 0.0, 40.0, 80.0, 40, 20),
            Some((0, 0, 40, 20))
        );
        // A box beyond the image is clipped or gone.
        assert_eq!(map.map_box(100.0, 100.0, 120.0, 120.0, 40, 20), None);
    }

    #[test]
    fn a_rotation_keeps_the_whole_image_and_maps_back() {
        let mut pixels = vec![255u8; 100 * 50];
        for y in 20..30 {
            for x in 40..60 {
                pixels[y * 100 + x] = 0;
            }
        }
        let image = gray(100, 50, pixels);
        let angle = 4f64.to_radians();
        let (rotated, map) = rotate(&image, angle);
        assert!(rotated.width >= 100 && rotated.height >= 50);
        // The dark square's centre stays at the centre; mapped back, a box
        // around it in the rotated image covers it in the source.
        let (cx, cy) = (
            f64::from(rotated.width) / 2.0,
            f64::from(rotated.height) / 2.0,
        );
        assert!(rotated.pixels[cy as usize * rotated.width as usize + cx as usize] < 30);
        let (x, y, w, h) = map
            .map_box(cx - 10.0, cy - 5.0, cx + 10.0, cy + 5.0, 100, 50)
            .expect("inside");
        assert!(
            x <= 41 && x + w >= 59 && y <= 21 && y + h >= 29,
            "{x},{y} {w}x{h}"
        );
        // Turning back by the same angle restores the square.
        let (back, _) = rotate(&rotated, -angle);
        let (bx, by) = (back.width as usize / 2, back.height as usize / 2);
        assert!(back.pixels[by * back.width as usize + bx] < 60);
    }

    #[test]
    fn even_light_whitens_shaded_paper_and_keeps_ink() {
        // Paper from 250 on the left to 110 on the right, ink a third as
        // bright as the paper under it.
        let (w, h) = (400usize, 200usize);
        let mut pixels = vec![0u8; w * h];
        for y in 0..h {
            for x in 0..w {
                let paper = 250.0 - 140.0 * x as f64 / w as f64;
                let ink = (y / 10) % 3 == 1 && (x / 6) % 2 == 0;
                pixels[y * w + x] = (if ink { paper / 3.0 } else { paper }).round() as u8;
            }
        }
        let image = gray(w as u32, h as u32, pixels);
        let even = even_light(&image).expect("uneven light is evened");
        let at = |x: usize, y: usize| even.pixels[y * w + x];
        // Paper on both sides is near white, ink on both sides dark.
        assert!(
            at(20, 5) > 235 && at(380, 5) > 235,
            "{} {}",
            at(20, 5),
            at(380, 5)
        );
        assert!(
            at(24, 15) < 110 && at(384, 15) < 110,
            "{} {}",
            at(24, 15),
            at(384, 15)
        );
        // A clean white scan is left alone.
        assert_eq!(even_light(&gray(400, 200, vec![255; 80_000])), None);
    }
}
