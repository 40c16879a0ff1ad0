//! Measuring how deep the flow collections of a YAML or JSON text nest (`[[[...` or `{a: {a: ...`),
//! before the parser sees it: the YAML parser rescans every open flow level at each token, so
//! 100,000 levels take minutes before its own depth limit answers. Deep block nesting costs the
//! parser nothing extra and is left to its limit.
//!
//! The scan follows the YAML scanner's rules for what opens a flow level: outside comments and
//! quoted, plain and block scalars, with block scalars and plain scalars continued over lines
//! by the same indentation rules. It also counts documents (`---`, `...`) the way the parser
//! numbers them, so the refusal names the document.

/// Deepest flow nesting accepted: the YAML decoder refuses anything deeper anyway.
pub const MAX_DEPTH: usize = 128;

/// Where the text first nests deeper than [`MAX_DEPTH`]: its 1-based document and line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep {
    pub document: usize,
    pub line: usize,
}

/// Checks that no flow collection of `text` nests deeper than [`MAX_DEPTH`], in one pass.
pub fn check(text: &str) -> Result<(), TooDeep> {
    Scanner::new(text).run()
}

fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// End of input, a blank or a line break: what must follow `-`, `?`, `:` indicators.
fn ends_token(c: Option<char>) -> bool {
    c.is_none_or(|c| is_blank(c) || is_break(c))
}

fn is_flow_indicator(c: Option<char>) -> bool {
    matches!(c, Some(',' | '[' | ']' | '{' | '}'))
}

struct Scanner {
    chars: Vec<char>,
    at: usize,
    line: usize,
    column: usize,
    /// Open flow collections.
    flow: usize,
    /// Block indentation, as the YAML scanner keeps it: the current level and the enclosing ones.
    indent: isize,
    indents: Vec<isize>,
    /// Column of the first token of a possible mapping key on this line (block context).
    key_column: Option<usize>,
    document: usize,
    /// The current document has begun (content or `---`), or was closed by `...`.
    open: bool,
    ended: bool,
}

impl Scanner {
    fn new(text: &str) -> Self {
        Scanner {
            chars: text.chars().collect(),
            at: 0,
            line: 1,
            column: 0,
            flow: 0,
            indent: -1,
            indents: Vec::new(),
            key_column: None,
            document: 1,
            open: false,
            ended: false,
        }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    /// Steps over one character; `\r\n` is one line break.
    fn bump(&mut self) {
        let Some(c) = self.peek(0) else { return };
        self.at += 1;
        if is_break(c) {
            if c == '\r' && self.peek(0) == Some('\n') {
                self.at += 1;
            }
            self.line += 1;
            self.column = 0;
            self.key_column = None;
        } else {
            self.column += 1;
        }
    }

    fn skip_while(&mut self, keep: impl Fn(char) -> bool) {
        while self.peek(0).is_some_and(&keep) {
            self.bump();
        }
    }

    fn document_marker(&self) -> Option<char> {
        let marker = self.peek(0).filter(|c| matches!(c, '-' | '.'))?;
        let three = self.peek(1) == Some(marker) && self.peek(2) == Some(marker);
        (self.column == 0 && three && ends_token(self.peek(3))).then_some(marker)
    }

    fn run(mut self) -> Result<(), TooDeep> {
        loop {
            self.skip_while(is_blank);
            let Some(c) = self.peek(0) else {
                return Ok(());
            };
            if is_break(c) {
                self.bump();
                continue;
            }
            if let Some(marker) = self.document_marker() {
                self.start_document(marker);
                continue;
            }
            if c == '#' || (c == '%' && self.column == 0 && self.flow == 0) {
                self.skip_while(|c| !is_break(c));
                continue;
            }
            if self.flow == 0 {
                while self.indent > self.column as isize {
                    self.indent = self.indents.pop().unwrap_or(-1);
                }
            }
            if self.ended {
                self.document += 1;
                self.ended = false;
            }
            self.open = true;
            self.token(c)?;
        }
    }

    fn start_document(&mut self, marker: char) {
        if marker == '-' {
            if self.open {
                self.document += 1;
            }
            self.open = true;
            self.ended = false;
        } else {
            self.ended = self.open;
        }
        self.flow = 0;
        self.indent = -1;
        self.indents.clear();
        for _ in 0..3 {
            self.bump();
        }
    }

    fn token(&mut self, c: char) -> Result<(), TooDeep> {
        let indicator = ends_token(self.peek(1));
        match c {
            '[' | '{' => {
                self.may_start_key();
                self.flow += 1;
                if self.flow > MAX_DEPTH {
                    return Err(TooDeep {
                        document: self.document,
                        line: self.line,
                    });
                }
                self.bump();
            }
            ']' | '}' => {
                self.flow = self.flow.saturating_sub(1);
                self.bump();
            }
            ',' => self.bump(),
            '\'' | '"' => {
                self.may_start_key();
                self.quoted(c);
            }
            '|' | '>' if self.flow == 0 => self.block_scalar(),
            '-' | '?' if self.flow == 0 && indicator => {
                self.roll(self.column);
                self.key_column = None;
                self.bump();
            }
            ':' if indicator || (self.flow > 0 && is_flow_indicator(self.peek(1))) => {
                if self.flow == 0 {
                    self.roll(self.key_column.unwrap_or(self.column));
                }
                self.key_column = None;
                self.bump();
            }
            '&' | '*' | '!' => {
                self.may_start_key();
                let flow = self.flow > 0;
                self.skip_while(|c| {
                    !(is_blank(c) || is_break(c) || (flow && is_flow_indicator(Some(c))))
                });
            }
            _ => {
                self.may_start_key();
                self.plain();
            }
        }
        Ok(())
    }

    fn may_start_key(&mut self) {
        if self.flow == 0 && self.key_column.is_none() {
            self.key_column = Some(self.column);
        }
    }

    fn roll(&mut self, column: usize) {
        let column = column as isize;
        if self.indent < column {
            self.indents.push(self.indent);
            self.indent = column;
        }
    }

    /// A quoted scalar, over as many lines as it spans: `''` escapes a single quote, `\` any
    /// character in double quotes.
    fn quoted(&mut self, quote: char) {
        self.bump();
        while let Some(c) = self.peek(0) {
            let escape = if quote == '\'' { '\'' } else { '\\' };
            if c == escape && (quote == '"' || self.peek(1) == Some('\'')) {
                // `''` in single quotes, `\x` in double quotes: skip both characters.
                self.bump();
            } else if c == quote {
                self.bump();
                return;
            }
            self.bump();
        }
    }

    /// A plain scalar: it ends at `: `, ` #`, and in a flow collection at a flow indicator, and
    /// goes on over the next line when that line is indented past the block (any line in flow).
    fn plain(&mut self) {
        loop {
            while let Some(c) = self.peek(0) {
                let flow_end = self.flow > 0 && is_flow_indicator(Some(c));
                let value = c == ':'
                    && (ends_token(self.peek(1))
                        || (self.flow > 0 && is_flow_indicator(self.peek(1))));
                let comment = is_blank(c) && self.peek(1) == Some('#');
                if is_break(c) || flow_end || value || comment {
                    break;
                }
                self.bump();
            }
            if self.peek(0).is_none_or(|c| !is_break(c)) {
                return;
            }
            self.skip_while(|c| is_blank(c) || is_break(c));
            let continues = self.document_marker().is_none()
                && self.peek(0).is_some_and(|c| c != '#')
                && (self.flow > 0 || self.column as isize > self.indent);
            if !continues {
                return;
            }
        }
    }

    /// A literal or folded block scalar: its header line, then every line indented at least as
    /// far as its content (the first non-empty line, and past the enclosing block), and the empty
    /// lines among them.
    fn block_scalar(&mut self) {
        let explicit = self.chars[self.at + 1..]
            .iter()
            .take_while(|c| !is_blank(**c) && !is_break(**c))
            .find_map(|c| c.to_digit(10))
            .map(|d| d as usize);
        self.skip_while(|c| !is_break(c));
        let floor = usize::try_from(self.indent + 1).unwrap_or(0).max(1);
        let mut content = explicit.map(|d| usize::try_from(self.indent).map_or(d, |i| i + d));
        let mut widest_empty = 0;
        while self.peek(0).is_some_and(is_break) {
            self.bump();
            let spaces = (0..).take_while(|k| self.peek(*k) == Some(' ')).count();
            match self.peek(spaces) {
                None => return,
                Some(c) if is_break(c) => {
                    widest_empty = widest_empty.max(spaces);
                    self.skip_while(|c| c == ' ');
                }
                Some(_) => {
                    let needed = *content.get_or_insert(spaces.max(widest_empty).max(floor));
                    if spaces < needed {
                        return;
                    }
                    self.skip_while(|c| !is_break(c));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
