//! Splitting names and prose into comparable words.
//!
//! Every word is folded to lower-case ASCII (`Destinatário` → `destinatario`), so English and
//! Portuguese words match however they were written. Names split at `_`, `-`, `.`, `/`, spaces,
//! digits and camelCase humps; prose keeps its clause and sentence boundaries, and marks the
//! identifiers it mentions (`update_issue`, `createIssue`, anything in backticks), because a
//! verb inside another tool's name says nothing about this tool.

use std::borrow::Cow;
use std::collections::VecDeque;

/// Folds a word to lower-case ASCII.
pub fn fold(word: &str) -> Cow<'_, str> {
    if word
        .bytes()
        .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
    {
        Cow::Borrowed(word)
    } else if word.is_ascii() {
        Cow::Owned(word.to_ascii_lowercase())
    } else {
        Cow::Owned(deunicode::deunicode(word).to_ascii_lowercase())
    }
}

/// Text cut to at most 60 characters for a reason or a message: a description may hold a
/// megabyte-long "identifier", and evidence must stay one line a person can read.
pub fn short(text: &str) -> Cow<'_, str> {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => Cow::Owned(format!("{}…", &text[..cut])),
        None => Cow::Borrowed(text),
    }
}

/// A name squeezed to its letters and digits, for telling whether prose mentions it:
/// `create_issue`, `createIssue` and `create-issue` are the same name.
pub fn squeeze(name: &str) -> String {
    fold(name)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect()
}

/// Splits an identifier (a tool or argument name) into folded words. Words that are already
/// lower-case ASCII are borrowed, not copied.
pub fn split_identifier(name: &str) -> Vec<Cow<'_, str>> {
    let mut words = Vec::new();
    let mut start = None;
    let mut prev: Option<char> = None;
    let mut chars = name.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !c.is_alphanumeric() {
            if let Some(s) = start.take() {
                words.push(fold(&name[s..i]));
            }
            prev = None;
            continue;
        }
        if let (Some(p), Some(s)) = (prev, start) {
            let next_is_lower = chars.peek().is_some_and(|(_, n)| n.is_lowercase());
            let hump = (p.is_lowercase() && c.is_uppercase())
                || (p.is_uppercase() && c.is_uppercase() && next_is_lower)
                || (p.is_alphabetic() && c.is_numeric())
                || (p.is_numeric() && c.is_alphabetic());
            if hump {
                words.push(fold(&name[s..i]));
                start = Some(i);
            }
        }
        start.get_or_insert(i);
        prev = Some(c);
    }
    if let Some(s) = start {
        words.push(fold(&name[s..]));
    }
    join_email(&mut words);
    words
}

/// `e-mail` and `e_mail` are one word.
fn join_email(words: &mut Vec<Cow<'_, str>>) {
    let mut i = 0;
    while i + 1 < words.len() {
        if words[i] == "e" && matches!(words[i + 1].as_ref(), "mail" | "mails") {
            let joined = format!("e{}", words[i + 1]);
            words.splice(i..=i + 1, [Cow::Owned(joined)]);
        }
        i += 1;
    }
}

/// One piece of prose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// A plain word: the text as written and its folded form.
    Word { text: &'a str, folded: Cow<'a, str> },
    /// An identifier: `snake_case`, camelCase, kebab-case led by a verb, or in backticks.
    Identifier { text: &'a str },
    /// Words in quotes: an example or a value, not something said of the tool.
    Quoted { text: &'a str },
    /// A comma or a bracket: they set off list items and asides as often as clauses.
    Comma,
    /// The end of a clause (`;` `:` `(` ...).
    ClauseEnd,
    /// The end of a sentence (`.` `!` `?` a line break).
    SentenceEnd,
}

/// Splits prose into words, identifiers and boundaries, lazily: a description of any size is
/// read in one pass without holding its words.
pub fn split_prose(text: &str) -> Prose<'_> {
    Prose {
        text,
        at: 0,
        pending: VecDeque::new(),
        last_was_boundary: true,
    }
}

/// The iterator of [`split_prose`].
#[derive(Debug)]
pub struct Prose<'a> {
    text: &'a str,
    at: usize,
    pending: VecDeque<Piece<'a>>,
    last_was_boundary: bool,
}

impl<'a> Iterator for Prose<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        loop {
            if let Some(piece) = self.pending.pop_front() {
                return Some(piece);
            }
            let piece = self.scan()?;
            let boundary = matches!(piece, Piece::ClauseEnd | Piece::SentenceEnd | Piece::Comma);
            if boundary && self.last_was_boundary {
                // Two boundaries in a row: keep the stronger one only.
                if piece == Piece::SentenceEnd || piece == Piece::ClauseEnd {
                    self.last_was_boundary = true;
                    return Some(piece);
                }
                continue;
            }
            self.last_was_boundary = boundary;
            return Some(piece);
        }
    }
}

impl<'a> Prose<'a> {
    fn scan(&mut self) -> Option<Piece<'a>> {
        let text = self.text;
        let bytes = text.as_bytes();
        while self.at < text.len() {
            let i = self.at;
            let byte = bytes[i];
            // The common cases first, on bytes: a space, or an ASCII word.
            if byte == b' ' || byte == b'\t' || byte == b'\r' {
                self.at += 1;
                continue;
            }
            if byte.is_ascii_alphanumeric() || byte == b'_' {
                let end = word_end(text, i);
                self.at = end;
                self.word(&text[i..end]);
                return self.pending.pop_front();
            }
            let c = text[i..].chars().next()?;
            let width = c.len_utf8();
            if matches!(c, '\'' | '"' | '‘' | '“') {
                let close = match c {
                    '‘' => '’',
                    '“' => '”',
                    other => other,
                };
                let after = i + width;
                let span = text[after..]
                    .char_indices()
                    .take(60)
                    .find(|(_, ch)| *ch == close || *ch == '\n');
                let starts_word = text[after..]
                    .chars()
                    .next()
                    .is_some_and(char::is_alphanumeric);
                if let Some((end, close_char)) =
                    span.filter(|(_, ch)| *ch == close).filter(|_| starts_word)
                {
                    self.at = after + end + close_char.len_utf8();
                    return Some(Piece::Quoted {
                        text: &text[after..after + end],
                    });
                }
            }
            if c == '`' {
                let end = text[i + 1..].find('`').map_or(text.len(), |e| i + 1 + e);
                self.at = (end + 1).min(text.len());
                let inner = text[i + 1..end].trim();
                if !inner.is_empty() {
                    return Some(Piece::Identifier { text: inner });
                }
                continue;
            }
            if c.is_alphanumeric() || c == '_' {
                let end = word_end(text, i);
                self.at = end;
                self.word(&text[i..end]);
                return self.pending.pop_front();
            }
            self.at += width;
            match c {
                '.' | '!' | '?' | '\n' => {
                    // A dot inside a number or a domain does not end a sentence.
                    let glued = c == '.'
                        && i > 0
                        && bytes.get(i + 1).is_some_and(u8::is_ascii_alphanumeric)
                        && bytes[i - 1].is_ascii_alphanumeric();
                    if !glued {
                        return Some(Piece::SentenceEnd);
                    }
                }
                ',' | '(' | ')' | '[' | ']' => return Some(Piece::Comma),
                ';' | ':' | '—' | '–' | '"' | '|' => {
                    return Some(Piece::ClauseEnd);
                }
                _ => {}
            }
        }
        None
    }

    fn word(&mut self, text: &'a str) {
        // One pass tells the common case (a plain word) from the rest.
        let mut camel = false;
        let mut joined = false;
        let mut prev = 0u8;
        for (i, &b) in text.as_bytes().iter().enumerate() {
            camel |= i > 1 && prev.is_ascii_lowercase() && b.is_ascii_uppercase();
            joined |= matches!(b, b'-' | b'\'' | b'_') || b == 0xE2; // 0xE2 leads '’'
            prev = b;
        }
        if camel || text.contains('_') {
            self.pending.push_back(Piece::Identifier { text });
            return;
        }
        if !joined || !text.contains(['-', '\'', '’']) {
            self.pending.push_back(Piece::Word {
                text,
                folded: fold(text),
            });
            return;
        }
        let folded = fold(text);
        if matches!(folded.as_ref(), "e-mail" | "e-mails") {
            let folded = Cow::Owned(folded.replace('-', ""));
            self.pending.push_back(Piece::Word { text, folded });
        } else if text.contains(['\'', '’']) {
            // "doesn't" → "doesnt", "user's" → "users".
            let folded: String = folded.chars().filter(char::is_ascii_alphanumeric).collect();
            self.pending.push_back(Piece::Word {
                text,
                folded: Cow::Owned(folded),
            });
        } else if kebab_name(&folded) {
            self.pending.push_back(Piece::Identifier { text });
        } else {
            let mut offset = 0;
            for part in text.split('-') {
                let part_text = &text[offset..offset + part.len()];
                offset += part.len() + 1;
                if !part.is_empty() {
                    self.pending.push_back(Piece::Word {
                        text: part_text,
                        folded: fold(part_text),
                    });
                }
            }
        }
    }
}

/// Where the word starting at `start` ends: letters, digits and `_`, with `-` and apostrophes
/// kept between two of them ("read-only", "doesn't"). ASCII is read byte by byte.
fn word_end(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let joins_next = |at: usize| {
        bytes.get(at).is_some_and(u8::is_ascii_alphanumeric)
            || (bytes.get(at).is_some_and(|b| *b >= 0x80)
                && text[at..].chars().next().is_some_and(char::is_alphanumeric))
    };
    let mut at = start;
    while at < bytes.len() {
        let b = bytes[at];
        let joiner = (b == b'-' || b == b'\'') && at > start && joins_next(at + 1);
        if b.is_ascii_alphanumeric() || b == b'_' || joiner {
            at += 1;
        } else if b >= 0x80 {
            let c = text[at..].chars().next().unwrap_or(' ');
            let width = c.len_utf8();
            if c.is_alphanumeric() || (c == '’' && at > start && joins_next(at + width)) {
                at += width;
            } else {
                break;
            }
        } else {
            break;
        }
    }
    at
}

/// `send-email`, `list-broadcasts`: a kebab-case name led by a verb names a tool; `read-only`,
/// `follow-up` and `built-in` are plain words.
fn kebab_name(folded: &str) -> bool {
    let mut parts = folded.split('-');
    let first = parts.next().unwrap_or_default();
    let last = folded.rsplit('-').next().unwrap_or_default();
    folded.contains('-')
        && crate::lexicon::lookup(first).is_some()
        && !matches!(
            last,
            "only" | "up" | "out" | "in" | "on" | "off" | "time" | "step"
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn identifiers_split_in_every_case_style() {
        for (name, words) in [
            ("create_issue", vec!["create", "issue"]),
            ("createPullRequest", vec!["create", "pull", "request"]),
            ("emitir-nota-fiscal", vec!["emitir", "nota", "fiscal"]),
            ("github/list_PRs", vec!["github", "list", "p", "rs"]),
            ("HTTPRequestSend", vec!["http", "request", "send"]),
            (
                "enviarParaDestinatário",
                vec!["enviar", "para", "destinatario"],
            ),
            ("s3Upload", vec!["s", "3", "upload"]),
            ("send_e_mail", vec!["send", "email"]),
            ("", vec![]),
        ] {
            assert_eq!(
                split_identifier(name),
                words.iter().map(|w| Cow::Borrowed(*w)).collect::<Vec<_>>(),
                "{name}"
            );
        }
    }

    #[test]
    fn squeezed_names_compare_across_styles() {
        assert_eq!(squeeze("create_issue"), squeeze("createIssue"));
        assert_eq!(squeeze("create-issue"), "createissue");
    }

    fn words(pieces: &[Piece<'_>]) -> Vec<String> {
        pieces
            .iter()
            .map(|p| match p {
                Piece::Word { folded, .. } => folded.to_string(),
                Piece::Identifier { text } => format!("<{text}>"),
                Piece::Quoted { text } => format!("'{text}'"),
                Piece::Comma => ",".into(),
                Piece::ClauseEnd => ";".into(),
                Piece::SentenceEnd => ".".into(),
            })
            .collect()
    }

    #[test]
    fn prose_keeps_boundaries_and_marks_identifiers() {
        let pieces: Vec<Piece<'_>> = split_prose(
            "Doesn't modify files; call `update issue` or update_issue, v1.2 of e-mail. Não altera",
        )
        .collect();
        assert_eq!(
            words(&pieces),
            vec![
                "doesnt",
                "modify",
                "files",
                ";",
                "call",
                "<update issue>",
                "or",
                "<update_issue>",
                ",",
                "v1",
                "2",
                "of",
                "email",
                ".",
                "nao",
                "altera"
            ]
        );
    }

    #[test]
    fn quotes_and_kebab_names_are_not_prose() {
        let pieces: Vec<Piece<'_>> =
            split_prose("includes 'type' and \"password reset\", see send-email; it's fine")
                .collect();
        assert_eq!(
            words(&pieces),
            vec![
                "includes",
                "'type'",
                "and",
                "'password reset'",
                ",",
                "see",
                "<send-email>",
                ";",
                "its",
                "fine"
            ]
        );
    }

    #[test]
    fn hyphenated_prose_words_are_words() {
        let pieces: Vec<Piece<'_>> = split_prose("A read-only view").collect();
        assert_eq!(words(&pieces), vec!["a", "read", "only", "view"]);
    }
}
