//! A reader of the library's result JSON for the fields that have no C
//! accessor; values the caller does not want (the captured text, which may
//! be megabytes) are skipped without being decoded.

/// A decoded JSON value. Numbers stay `f64`: the result's integers are ids
/// and limits below 2^53.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Value>),
    Obj(Vec<(String, Value)>),
}

impl Value {
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Obj(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A non-negative integer that fits `u64` exactly.
    pub(crate) fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Num(n) if *n >= 0.0 && n.fract() == 0.0 && *n < 18_446_744_073_709_551_616.0 => Some(*n as u64),
            _ => None,
        }
    }

    pub(crate) fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Arr(a) => Some(a),
            _ => None,
        }
    }
}

/// Parses one JSON object, keeping only the members whose path `want`
/// accepts: `want(&["stdout", "tee_error"])` is asked for the member
/// "tee_error" of the top-level member "stdout"; an object member is kept
/// (and its own members asked about) when `want` accepts its path.
/// Returns `None` for text that is not one JSON object.
pub(crate) fn parse_object(text: &[u8], want: &dyn Fn(&[&str]) -> bool) -> Option<Value> {
    let mut p = Parser { s: text, i: 0 };
    p.ws();
    let mut path = Vec::new();
    let v = p.object(&mut path, want)?;
    p.ws();
    (p.i == p.s.len()).then_some(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.s.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn object(&mut self, path: &mut Vec<String>, want: &dyn Fn(&[&str]) -> bool) -> Option<Value> {
        self.eat(b'{')?;
        let mut members = Vec::new();
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(Value::Obj(members));
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.eat(b':')?;
            path.push(key);
            let keep = want(&path.iter().map(String::as_str).collect::<Vec<_>>());
            if keep {
                let v = if self.peek()? == b'{' { self.object(path, want)? } else { self.value()? };
                members.push((path.pop()?, v));
            } else {
                self.skip()?;
                path.pop();
            }
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(Value::Obj(members));
                }
                _ => return None,
            }
        }
    }

    /// Any value, every member of its objects kept.
    fn value(&mut self) -> Option<Value> {
        match self.peek()? {
            b'{' => self.object(&mut Vec::new(), &|_| true),
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                if self.peek()? == b']' {
                    self.i += 1;
                    return Some(Value::Arr(items));
                }
                loop {
                    items.push(self.value()?);
                    match self.peek()? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Some(Value::Arr(items));
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => self.string().map(Value::Str),
            b't' => self.word(b"true", Value::Bool(true)),
            b'f' => self.word(b"false", Value::Bool(false)),
            b'n' => self.word(b"null", Value::Null),
            _ => {
                let start = self.i;
                while self.i < self.s.len() && matches!(self.s[self.i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    self.i += 1;
                }
                std::str::from_utf8(&self.s[start..self.i]).ok()?.parse().ok().map(Value::Num)
            }
        }
    }

    /// Steps over a value without decoding it.
    fn skip(&mut self) -> Option<()> {
        match self.peek()? {
            b'{' | b'[' => {
                let mut depth = 0usize;
                while let Some(&c) = self.s.get(self.i) {
                    match c {
                        b'"' => {
                            self.skip_string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
                None
            }
            b'"' => self.skip_string(),
            _ => self.value().map(|_| ()),
        }
    }

    fn skip_string(&mut self) -> Option<()> {
        self.i += 1; // the opening quote
        while let Some(&c) = self.s.get(self.i) {
            self.i += if c == b'\\' { 2 } else { 1 };
            if c == b'"' {
                return Some(());
            }
        }
        None
    }

    fn word(&mut self, w: &[u8], v: Value) -> Option<Value> {
        self.s[self.i..].starts_with(w).then(|| {
            self.i += w.len();
            v
        })
    }

    fn string(&mut self) -> Option<String> {
        if self.s.get(self.i) != Some(&b'"') {
            return None;
        }
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let c = *self.s.get(self.i)?;
            self.i += 1;
            match c {
                b'"' => return String::from_utf8(out).ok(),
                b'\\' => {
                    let e = *self.s.get(self.i)?;
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&hi) {
                                if !self.s[self.i..].starts_with(b"\\u") {
                                    return None;
                                }
                                self.i += 2;
                                let lo = self.hex4()?;
                                0x10000 + ((hi - 0xd800) << 10) + lo.checked_sub(0xdc00)?
                            } else {
                                hi
                            };
                            char::from_u32(code)?
                        }
                        _ => return None,
                    };
                    out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                }
                _ => out.push(c),
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = std::str::from_utf8(self.s.get(self.i..self.i + 4)?).ok()?;
        self.i += 4;
        u32::from_str_radix(h, 16).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_is_wanted_and_skips_the_rest() {
        let text = br#"{"outcome": "exited", "stdout": {"captured": "a \"}] \\", "tee_error": "EPIPE"},
            "n": [1, {"x": "]"}], "limit": null, "confined": {"cpu_seconds": {"value": 1, "mechanism": "rlimit"},
            "user": {"uid": 65534, "groups": [1, 2]}}, "s": "\u00e9\ud83d\ude00\n"}"#;
        let want = |p: &[&str]| matches!(p, ["stdout"] | ["stdout", "tee_error"] | ["limit"] | ["confined", ..] | ["s"]);
        let v = parse_object(text, &want).unwrap();
        assert_eq!(v.get("outcome"), None);
        assert_eq!(v.get("n"), None);
        assert_eq!(v.get("stdout").unwrap().get("captured"), None);
        assert_eq!(v.get("stdout").unwrap().get("tee_error").unwrap().as_str(), Some("EPIPE"));
        assert_eq!(v.get("limit"), Some(&Value::Null));
        let c = v.get("confined").unwrap();
        assert_eq!(c.get("cpu_seconds").unwrap().get("value").unwrap().as_u64(), Some(1));
        assert_eq!(c.get("user").unwrap().get("groups").unwrap().as_array().unwrap().len(), 2);
        assert_eq!(v.get("s").unwrap().as_str(), Some("é😀\n"));
    }

    #[test]
    fn refuses_what_is_not_one_object() {
        let all = |_: &[&str]| true;
        for bad in [&b"[]"[..], b"{", b"{\"a\": }", b"{\"a\": 1} x", b"{\"a\": \"\\x\"}", b"{\"a\" 1}"] {
            assert_eq!(parse_object(bad, &all), None, "{}", String::from_utf8_lossy(bad));
        }
    }
}
