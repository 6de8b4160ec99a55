//! Glob patterns for tool names, argument values and destinations.
//!
//! globset parses the glob (`*`, `?`, `[...]`, `{a,b}`) and says which regular expression it
//! means; the expression is then matched directly, which skips the path handling that globset
//! does on every match and that these values, not being paths, never need. `*` crosses `/`.

use regex::bytes::Regex;

/// A compiled glob.
#[derive(Clone, Debug)]
pub struct Glob {
    text: String,
    regex: Regex,
}

impl Glob {
    /// Compiles `pattern`; the error says why it does not compile.
    pub fn new(pattern: &str, case_insensitive: bool) -> Result<Self, String> {
        let glob = globset::GlobBuilder::new(pattern)
            .case_insensitive(case_insensitive)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
            .map_err(|e| e.kind().to_string())?;
        let regex = Regex::new(glob.regex()).map_err(|e| e.to_string())?;
        Ok(Self {
            text: pattern.to_owned(),
            regex,
        })
    }

    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text.as_bytes())
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::Glob;

    #[test]
    fn globs_match_whole_values() {
        let glob = Glob::new("github/*", false).unwrap();
        assert!(glob.is_match("github/create_issue"));
        assert!(glob.is_match("github/a/b"));
        assert!(!glob.is_match("xgithub/a"));
        assert!(!glob.is_match("GITHUB/a"));
        assert!(
            Glob::new("*@EXAMPLE.com", true)
                .unwrap()
                .is_match("ann@example.COM")
        );
        assert!(
            Glob::new("{prod,production}", false)
                .unwrap()
                .is_match("production")
        );
        assert!(Glob::new("a[", false).is_err());
    }
}
