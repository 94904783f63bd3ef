//! RTF tokens: group braces, control words with their optional numeric
//! parameter, control symbols, `\'hh` bytes, runs of plain text and
//! `\binN` binary data (skipped by its declared length, within the
//! input). One pass, no recursion, no allocation.

/// Longest control word name the RTF spec allows.
const MAX_WORD: usize = 32;

/// Most digits a control word parameter may have.
const MAX_DIGITS: usize = 10;

/// One token of an RTF file.
#[derive(Debug, Clone, PartialEq)]
pub enum Token<'a> {
    /// `{`
    Open,
    /// `}`
    Close,
    /// `\word` or `\wordN`.
    Word(&'a str, Option<i32>),
    /// `\` followed by a non-letter (`\~`, `\*`, `\{`).
    Symbol(u8),
    /// `\'hh`: a byte in the current code page.
    Hex(u8),
    /// Plain bytes (line ends excluded).
    Text(&'a [u8]),
    /// Binary data of `\binN`.
    Binary,
}

/// Tokens of an RTF file, in order.
pub struct Lexer<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    /// Tokens of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Lexer<'a> {
        Lexer { bytes, pos: 0 }
    }

    /// The control word, symbol or byte after a backslash at `self.pos`.
    fn control(&mut self) -> Option<Token<'a>> {
        let start = self.pos;
        let first = *self.bytes.get(start)?;
        if !first.is_ascii_alphabetic() {
            self.pos += 1;
            if first == b'\'' {
                return Some(self.hex());
            }
            return Some(Token::Symbol(first));
        }
        while self.pos < self.bytes.len()
            && self.pos - start < MAX_WORD
            && self.bytes[self.pos].is_ascii_alphabetic()
        {
            self.pos += 1;
        }
        let word = std::str::from_utf8(&self.bytes[start..self.pos]).unwrap_or("");
        let param = self.parameter();
        if self.bytes.get(self.pos) == Some(&b' ') {
            self.pos += 1;
        }
        if word == "bin" {
            let len = usize::try_from(param.unwrap_or(0).max(0)).unwrap_or(0);
            self.pos = self.pos.saturating_add(len).min(self.bytes.len());
            return Some(Token::Binary);
        }
        Some(Token::Word(word, param))
    }

    /// An optional signed decimal parameter (saturating).
    fn parameter(&mut self) -> Option<i32> {
        let negative = self.bytes.get(self.pos) == Some(&b'-')
            && self.bytes.get(self.pos + 1).is_some_and(u8::is_ascii_digit);
        if negative {
            self.pos += 1;
        }
        let start = self.pos;
        let mut value: i64 = 0;
        while let Some(d) = self.bytes.get(self.pos).filter(|b| b.is_ascii_digit()) {
            if self.pos - start < MAX_DIGITS {
                value = value * 10 + i64::from(d - b'0');
            }
            self.pos += 1;
        }
        if self.pos == start {
            return None;
        }
        let value = if negative { -value } else { value };
        Some(value.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
    }

    /// The byte of `\'hh` (a malformed one reads as `?`).
    fn hex(&mut self) -> Token<'a> {
        let digits = self.bytes.get(self.pos..self.pos + 2);
        let value = digits
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u8::from_str_radix(d, 16).ok());
        match value {
            Some(v) => {
                self.pos += 2;
                Token::Hex(v)
            }
            None => Token::Hex(b'?'),
        }
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        loop {
            let byte = *self.bytes.get(self.pos)?;
            match byte {
                b'{' => {
                    self.pos += 1;
                    return Some(Token::Open);
                }
                b'}' => {
                    self.pos += 1;
                    return Some(Token::Close);
                }
                b'\\' => {
                    self.pos += 1;
                    return self.control();
                }
                b'\r' | b'\n' => self.pos += 1,
                _ => {
                    let start = self.pos;
                    while self
                        .bytes
                        .get(self.pos)
                        .is_some_and(|b| !matches!(b, b'{' | b'}' | b'\\' | b'\r' | b'\n'))
                    {
                        self.pos += 1;
                    }
                    return Some(Token::Text(&self.bytes[start..self.pos]));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        let tokens: Vec<Token> =
            Lexer::new(b"{\\rtf1\\ansi x\\'e9\\u-3\\~{\\bin3 {}}y}\r\n").collect();
        assert_eq!(
            tokens,
            vec![
                Token::Open,
                Token::Word("rtf", Some(1)),
                Token::Word("ansi", None),
                Token::Text(b"x"),
                Token::Hex(0xe9),
                Token::Word("u", Some(-3)),
                Token::Symbol(b'~'),
                Token::Open,
                Token::Binary,
                Token::Text(b"y"),
                Token::Close,
            ]
        );
    }

    #[test]
    fn huge_parameters_and_truncation_are_safe() {
        let tokens: Vec<Token> = Lexer::new(b"\\fs99999999999999999999\\'4").collect();
        assert_eq!(tokens[0], Token::Word("fs", Some(i32::MAX)));
        assert_eq!(tokens[1], Token::Hex(b'?'));
        assert_eq!(Lexer::new(b"\\bin999999999").count(), 1);
        assert_eq!(Lexer::new(b"\\").count(), 0);
    }
}
