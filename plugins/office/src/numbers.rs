//! List numbers written the way word processors show them: decimal,
//! letters, roman numerals and the Korean syllable sequences, named as
//! Word (`lowerRoman`) or OpenDocument (`i`) name them.

/// How a list level writes its numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NumberFormat {
    Decimal,
    DecimalZero,
    LowerLetter,
    UpperLetter,
    LowerRoman,
    UpperRoman,
    /// 가, 나, 다, …
    Ganada,
    /// ㄱ, ㄴ, ㄷ, …
    Chosung,
}

impl NumberFormat {
    /// A Word `w:numFmt` value; unknown formats fall back to decimal.
    pub fn from_word(name: &str) -> NumberFormat {
        match name {
            "decimalZero" => NumberFormat::DecimalZero,
            "lowerLetter" => NumberFormat::LowerLetter,
            "upperLetter" => NumberFormat::UpperLetter,
            "lowerRoman" => NumberFormat::LowerRoman,
            "upperRoman" => NumberFormat::UpperRoman,
            "ganada" => NumberFormat::Ganada,
            "chosung" => NumberFormat::Chosung,
            _ => NumberFormat::Decimal,
        }
    }

    /// An OpenDocument `style:num-format` value (`1`, `a`, `I`, `가`);
    /// unknown formats fall back to decimal.
    pub fn from_odf(name: &str) -> NumberFormat {
        match name {
            "a" => NumberFormat::LowerLetter,
            "A" => NumberFormat::UpperLetter,
            "i" => NumberFormat::LowerRoman,
            "I" => NumberFormat::UpperRoman,
            "가" => NumberFormat::Ganada,
            "ㄱ" => NumberFormat::Chosung,
            _ => NumberFormat::Decimal,
        }
    }

    /// `n` in this format.
    pub fn write(self, n: u32) -> String {
        match self {
            NumberFormat::Decimal => n.to_string(),
            NumberFormat::DecimalZero => format!("{n:02}"),
            NumberFormat::LowerLetter => letters(n, 'a'),
            NumberFormat::UpperLetter => letters(n, 'A'),
            NumberFormat::LowerRoman => roman(n).to_lowercase(),
            NumberFormat::UpperRoman => roman(n),
            NumberFormat::Ganada => cycle(n, "가나다라마바사아자차카타파하"),
            NumberFormat::Chosung => cycle(n, "ㄱㄴㄷㄹㅁㅂㅅㅇㅈㅊㅋㅌㅍㅎ"),
        }
    }
}

/// `a`…`z`, then `aa`, `bb`…, as word processors letter lists.
fn letters(n: u32, first: char) -> String {
    let n = n.max(1) - 1;
    let letter = char::from_u32(first as u32 + n % 26).unwrap_or(first);
    std::iter::repeat_n(letter, (n / 26 + 1).min(100) as usize).collect()
}

/// Roman numerals (plain digits for 0 and past 3999).
fn roman(n: u32) -> String {
    const NUMERALS: [(u32, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    if n == 0 || n > 3999 {
        return n.to_string();
    }
    let mut left = n;
    let mut out = String::new();
    for (value, numeral) in NUMERALS {
        while left >= value {
            out.push_str(numeral);
            left -= value;
        }
    }
    out
}

/// The `n`th character of `sequence`, cycling.
fn cycle(n: u32, sequence: &str) -> String {
    let count = sequence.chars().count().max(1);
    let i = (n.max(1) - 1) as usize % count;
    sequence
        .chars()
        .nth(i)
        .map(String::from)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(NumberFormat::from_word("lowerLetter").write(28), "bb");
        assert_eq!(NumberFormat::from_word("upperRoman").write(14), "XIV");
        assert_eq!(NumberFormat::from_odf("i").write(4), "iv");
        assert_eq!(NumberFormat::from_word("ganada").write(2), "나");
        assert_eq!(NumberFormat::from_odf("1").write(7), "7");
    }
}
