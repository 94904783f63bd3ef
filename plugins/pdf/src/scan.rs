//! Where a page's images are painted: its content stream is walked for
//! the graphics state (`q`, `Q`, `cm`) and every `Do` of an image XObject
//! (also inside Form XObjects, to a small depth), giving each image's
//! matrix in the page as a viewer shows it (the page's `/Rotate` applied).
//!
//! The walk is iterative (a queue of content streams, a bounded `q`
//! stack) and bounded in operations, forms and images, so a hostile
//! content stream costs a bounded amount of work.

use image::metadata::Orientation;
use lopdf::content::Content;
use lopdf::{Dictionary, Document as Pdf, Object, ObjectId, Stream};

use crate::filters::{self, resolve};
use crate::raster::{self, ImageInfo};

/// The most content-stream operations read for one page.
const MAX_OPERATIONS: usize = 2_000_000;
/// The most bytes of one decoded content stream.
const MAX_CONTENT_BYTES: usize = 64 << 20;
/// The most Form XObjects entered for one page.
const MAX_FORMS: usize = 64;
/// How deeply Form XObjects are entered (1: forms on the page itself).
const MAX_FORM_DEPTH: u8 = 2;
/// The deepest `q` nesting followed.
const MAX_SAVED_STATES: usize = 256;
/// The most images recorded on one page.
pub const MAX_IMAGES: usize = 256;
/// Images with fewer pixels than this (rules, bullets, icons) are ignored.
const MIN_IMAGE_PIXELS: u64 = 256;

/// An affine matrix `[a b c d e f]`: x' = a·x + c·y + e, y' = b·x + d·y + f.
pub type Matrix = [f64; 6];

const IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

/// `first` applied, then `then` (PDF's `first × then`).
fn concat(first: Matrix, then: Matrix) -> Matrix {
    let [a, b, c, d, e, f] = first;
    let [ta, tb, tc, td, te, tf] = then;
    [
        a * ta + b * tc,
        a * tb + b * td,
        c * ta + d * tc,
        c * tb + d * td,
        e * ta + f * tc + te,
        e * tb + f * td + tf,
    ]
}

/// An image painted on a page.
#[derive(Debug, Clone)]
pub struct Placement<'a> {
    /// The image XObject.
    pub stream: &'a Stream,
    /// Its size, from its dictionary.
    pub info: ImageInfo,
    /// The image's unit square mapped into the shown page.
    pub matrix: Matrix,
}

impl Placement<'_> {
    /// The box the image covers on the shown page: left, bottom, right, top.
    pub fn bounds(&self) -> [f64; 4] {
        let [a, b, c, d, e, f] = self.matrix;
        let xs = [e, a + e, c + e, a + c + e];
        let ys = [f, b + f, d + f, b + d + f];
        let min = |v: [f64; 4]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = |v: [f64; 4]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        [min(xs), min(ys), max(xs), max(ys)]
    }

    /// Its area on the shown page.
    pub fn area(&self) -> f64 {
        let [left, bottom, right, top] = self.bounds();
        (right - left) * (top - bottom)
    }

    /// How to turn the image's pixels to show them as the page does, or
    /// `None` when it is skewed (not a multiple of 90°).
    pub fn orientation(&self) -> Option<Orientation> {
        let [a, b, c, d, ..] = self.matrix;
        let scale = a.abs() + b.abs() + c.abs() + d.abs();
        let small = |v: f64| v.abs() <= scale * 1e-3;
        if small(b) && small(c) {
            return Some(match (a > 0.0, d > 0.0) {
                (true, true) => Orientation::NoTransforms,
                (false, true) => Orientation::FlipHorizontal,
                (true, false) => Orientation::FlipVertical,
                (false, false) => Orientation::Rotate180,
            });
        }
        if small(a) && small(d) {
            return Some(match (b > 0.0, c > 0.0) {
                (true, false) => Orientation::Rotate270,
                (false, true) => Orientation::Rotate90,
                (true, true) => Orientation::Rotate270FlipH,
                (false, false) => Orientation::Rotate90FlipH,
            });
        }
        None
    }
}

/// A content stream still to walk.
struct Job<'a> {
    content: Vec<u8>,
    resources: Vec<&'a Dictionary>,
    matrix: Matrix,
    depth: u8,
}

/// The images painted on page `page_id`, in the order they are met
/// (those of forms after the page's own), each big enough to hold text.
pub fn placements(pdf: &Pdf, page_id: ObjectId) -> Vec<Placement<'_>> {
    let Ok(page) = pdf.get_dictionary(page_id) else {
        return Vec::new();
    };
    let mut jobs = vec![Job {
        content: page_content(pdf, page_id),
        resources: page_resources(pdf, page_id),
        matrix: page_rotation(pdf, page),
        depth: 0,
    }];
    let mut found = Vec::new();
    let (mut operations, mut forms) = (0usize, 0usize);
    while let Some(job) = jobs.pop() {
        let Ok(content) = Content::decode(&job.content) else {
            continue;
        };
        let mut matrix = job.matrix;
        let mut saved: Vec<Matrix> = Vec::new();
        for op in &content.operations {
            operations += 1;
            if operations > MAX_OPERATIONS || found.len() >= MAX_IMAGES {
                return found;
            }
            match op.operator.as_str() {
                "q" if saved.len() < MAX_SAVED_STATES => saved.push(matrix),
                "Q" => matrix = saved.pop().unwrap_or(job.matrix),
                "cm" => {
                    if let Some(m) = numbers(&op.operands) {
                        matrix = concat(m, matrix);
                    }
                }
                "Do" => {
                    let Some(stream) = op
                        .operands
                        .first()
                        .and_then(|n| n.as_name().ok())
                        .and_then(|name| xobject(pdf, &job.resources, name))
                    else {
                        continue;
                    };
                    match stream.dict.get(b"Subtype").and_then(Object::as_name) {
                        Ok(b"Image") => {
                            if let Some(info) = raster::info(pdf, &stream.dict)
                                && u64::from(info.width) * u64::from(info.height)
                                    >= MIN_IMAGE_PIXELS
                            {
                                found.push(Placement {
                                    stream,
                                    info,
                                    matrix,
                                });
                            }
                        }
                        Ok(b"Form") if job.depth < MAX_FORM_DEPTH && forms < MAX_FORMS => {
                            forms += 1;
                            jobs.push(form_job(pdf, stream, &job, matrix));
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }
    found
}

/// The job of walking a Form XObject painted with `matrix`.
fn form_job<'a>(pdf: &'a Pdf, form: &'a Stream, parent: &Job<'a>, matrix: Matrix) -> Job<'a> {
    let own = form
        .dict
        .get(b"Matrix")
        .ok()
        .and_then(|m| resolve(pdf, m).as_array().ok())
        .and_then(|m| numbers(m))
        .unwrap_or(IDENTITY);
    let resources = match form.dict.get(b"Resources").map(|r| resolve(pdf, r)) {
        Ok(Object::Dictionary(d)) => vec![d],
        _ => parent.resources.clone(),
    };
    Job {
        content: filters::decode_plain(pdf, form, MAX_CONTENT_BYTES).unwrap_or_default(),
        resources,
        matrix: concat(own, matrix),
        depth: parent.depth + 1,
    }
}

/// Six numbers (a matrix), or `None`.
fn numbers(operands: &[Object]) -> Option<Matrix> {
    let values: Vec<f64> = operands
        .iter()
        .filter_map(|o| o.as_float().ok())
        .map(f64::from)
        .collect();
    let matrix: Matrix = values.try_into().ok()?;
    matrix.iter().all(|v| v.is_finite()).then_some(matrix)
}

/// The page's content streams, decoded (each bounded) and joined.
fn page_content(pdf: &Pdf, page_id: ObjectId) -> Vec<u8> {
    let mut content = Vec::new();
    for id in pdf.get_page_contents(page_id) {
        if let Ok(stream) = pdf.get_object(id).and_then(Object::as_stream)
            && let Ok(data) = filters::decode_plain(pdf, stream, MAX_CONTENT_BYTES)
            && content.len() + data.len() <= MAX_CONTENT_BYTES
        {
            content.extend_from_slice(&data);
            content.push(b'\n');
        }
    }
    content
}

/// The page's resource dictionaries, its own first, then inherited ones.
fn page_resources(pdf: &Pdf, page_id: ObjectId) -> Vec<&Dictionary> {
    let Ok((own, inherited)) = pdf.get_page_resources(page_id) else {
        return Vec::new();
    };
    own.into_iter()
        .chain(
            inherited
                .into_iter()
                .filter_map(|id| pdf.get_dictionary(id).ok()),
        )
        .collect()
}

/// The XObject `name` in the first resource dictionary that has it.
fn xobject<'a>(pdf: &'a Pdf, resources: &[&'a Dictionary], name: &[u8]) -> Option<&'a Stream> {
    resources.iter().find_map(|r| {
        let xobjects = resolve(pdf, r.get(b"XObject").ok()?).as_dict().ok()?;
        resolve(pdf, xobjects.get(name).ok()?).as_stream().ok()
    })
}

/// The page's `/Rotate` (clockwise, a multiple of 90°, inheritable) as a
/// matrix from page space to the shown page.
fn page_rotation(pdf: &Pdf, page: &Dictionary) -> Matrix {
    let mut node = Some(page);
    let mut rotate = 0;
    for _ in 0..32 {
        let Some(dict) = node else { break };
        if let Ok(value) = dict.get(b"Rotate").map(|v| resolve(pdf, v)) {
            rotate = value.as_i64().unwrap_or(0);
            break;
        }
        node = dict
            .get(b"Parent")
            .ok()
            .and_then(|p| resolve(pdf, p).as_dict().ok());
    }
    match rotate.rem_euclid(360) {
        90 => [0.0, -1.0, 1.0, 0.0, 0.0, 0.0],
        180 => [-1.0, 0.0, 0.0, -1.0, 0.0, 0.0],
        270 => [0.0, 1.0, -1.0, 0.0, 0.0, 0.0],
        _ => IDENTITY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(matrix: Matrix) -> Option<Orientation> {
        let stream = Stream::new(Dictionary::new(), Vec::new());
        Placement {
            stream: &stream,
            info: ImageInfo {
                width: 10,
                height: 10,
                mask: false,
            },
            matrix,
        }
        .orientation()
    }

    #[test]
    fn matrices_concatenate_in_pdf_order() {
        // Scale by 2, then move by (10, 20).
        let m = concat(
            [2.0, 0.0, 0.0, 2.0, 0.0, 0.0],
            [1.0, 0.0, 0.0, 1.0, 10.0, 20.0],
        );
        assert_eq!(m, [2.0, 0.0, 0.0, 2.0, 10.0, 20.0]);
        let m = concat(
            [1.0, 0.0, 0.0, 1.0, 10.0, 20.0],
            [2.0, 0.0, 0.0, 2.0, 0.0, 0.0],
        );
        assert_eq!(m, [2.0, 0.0, 0.0, 2.0, 20.0, 40.0]);
    }

    #[test]
    fn orientations_follow_the_matrix() {
        assert_eq!(
            placed([300.0, 0.0, 0.0, 400.0, 0.0, 0.0]),
            Some(Orientation::NoTransforms)
        );
        assert_eq!(
            placed([300.0, 0.0, 0.0, -400.0, 0.0, 400.0]),
            Some(Orientation::FlipVertical)
        );
        assert_eq!(
            placed([-300.0, 0.0, 0.0, -400.0, 0.0, 0.0]),
            Some(Orientation::Rotate180)
        );
        assert_eq!(
            placed([0.0, 300.0, -400.0, 0.0, 0.0, 0.0]),
            Some(Orientation::Rotate270)
        );
        assert_eq!(
            placed([0.0, -300.0, 400.0, 0.0, 0.0, 0.0]),
            Some(Orientation::Rotate90)
        );
        assert_eq!(
            placed([200.0, 200.0, -200.0, 200.0, 0.0, 0.0]),
            None,
            "45° is skewed"
        );
    }

    #[test]
    fn a_rotated_page_turns_its_images() {
        // /Rotate 90 turns an upright image clockwise on the shown page.
        let shown = concat(
            [300.0, 0.0, 0.0, 400.0, 0.0, 0.0],
            [0.0, -1.0, 1.0, 0.0, 0.0, 0.0],
        );
        assert_eq!(placed(shown), Some(Orientation::Rotate90));
    }
}
