#!/usr/bin/env bash
# Prepare a machine for kebab's OCR (the host's Tesseract engine) and its
# tests. Sourced by setup.sh; also runs on its own. Safe to run repeatedly.
#
# Like setup.sh, every check asks for the files the engine and the tests
# open, never for a command's name: kebab loads libtesseract.so.5 at run
# time and reads the language data itself, so a `tesseract` on PATH proves
# nothing. What is missing is installed from Debian's packages:
#   libtesseract5              libtesseract.so.5 (Tesseract 5's C API)
#   tesseract-ocr-script-hang  Hangul.traineddata: Korean and Latin in one
#                              model, the engine's default
#   tesseract-ocr-osd          osd.traineddata: pages turned 90/180/270°
#   tesseract-ocr-kor, -eng    kor/eng.traineddata: `[ocr] languages`
#                              alternatives (and the tests' fallback order)
#   tesseract-ocr-jpn, -chi-sim  jpn/chi_sim.traineddata: Japanese and
#                              Chinese pages, by `[ocr] languages`
#   fonts-nanum                NanumGothic/NanumMyeongjo: the fixture renders
#                              (tests/fixtures/ocr/make_scans.py)
set -euo pipefail

# libtesseract.so.5 where the dynamic loader finds it.
setup_ocr_has_library() {
    ldconfig -p 2>/dev/null | grep -q 'libtesseract\.so\.5 ' ||
        compgen -G '/usr/lib/*/libtesseract.so.5' >/dev/null ||
        compgen -G '/lib/*/libtesseract.so.5' >/dev/null
}

# The tessdata folder the engine reads: TESSDATA_PREFIX, else Debian's.
setup_ocr_tessdata() {
    if [ -n "${TESSDATA_PREFIX:-}" ] && [ -d "$TESSDATA_PREFIX" ]; then
        echo "$TESSDATA_PREFIX"
    else
        echo /usr/share/tesseract-ocr/5/tessdata
    fi
}

setup_ocr_has_data() {
    [ -f "$(setup_ocr_tessdata)/$1.traineddata" ]
}

setup_ocr_has_fonts() {
    [ -f /usr/share/fonts/truetype/nanum/NanumGothic.ttf ] &&
        [ -f /usr/share/fonts/truetype/nanum/NanumMyeongjo.ttf ]
}

setup_ocr_check() {
    setup_ocr_missing=()
    setup_ocr_has_library || setup_ocr_missing+=(libtesseract5)
    setup_ocr_has_data Hangul || setup_ocr_missing+=(tesseract-ocr-script-hang)
    setup_ocr_has_data osd || setup_ocr_missing+=(tesseract-ocr-osd)
    setup_ocr_has_data kor || setup_ocr_missing+=(tesseract-ocr-kor)
    setup_ocr_has_data eng || setup_ocr_missing+=(tesseract-ocr-eng)
    setup_ocr_has_data jpn || setup_ocr_missing+=(tesseract-ocr-jpn)
    setup_ocr_has_data chi_sim || setup_ocr_missing+=(tesseract-ocr-chi-sim)
    setup_ocr_has_fonts || setup_ocr_missing+=(fonts-nanum)
}

setup_ocr_check
if [ ${#setup_ocr_missing[@]} -gt 0 ]; then
    echo "setup: installing ${setup_ocr_missing[*]} (apt, for OCR)" >&2
    setup_ocr_sudo=""
    [ "$(id -u)" -eq 0 ] || setup_ocr_sudo="sudo"
    $setup_ocr_sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $setup_ocr_sudo apt-get install -y -qq --no-install-recommends \
        "${setup_ocr_missing[@]}" >&2
    # Installed but still missing (TESSDATA_PREFIX pointing elsewhere, a
    # distribution with another layout) is a setup error, not a test failure.
    setup_ocr_check
    if [ ${#setup_ocr_missing[@]} -gt 0 ]; then
        echo "error: still missing after apt-get install: ${setup_ocr_missing[*]}" >&2
        echo "  hint: the engine reads $(setup_ocr_tessdata)/{Hangul,osd,kor,eng}.traineddata and loads libtesseract.so.5; unset TESSDATA_PREFIX or copy the data there" >&2
        exit 2
    fi
fi
unset setup_ocr_missing setup_ocr_sudo
