use proptest::prelude::*;
use purko_analysis::{CheckList, CodeLanguage, SourceLanguage, analyze, check};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn analyze_never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = analyze(&bytes, SourceLanguage::Python);
        let _ = analyze(&bytes, SourceLanguage::Go);
    }

    #[test]
    fn analyze_and_check_never_panic_on_code_like_text(
        text in "[a-z_().=\"'#:\\[\\] \n\t$|<>&;{}`\\\\-]{0,300}"
    ) {
        let _ = analyze(text.as_bytes(), SourceLanguage::Python);
        let _ = analyze(text.as_bytes(), SourceLanguage::Go);
        let list = CheckList::default();
        let _ = check(&text, CodeLanguage::Python, &list);
        let _ = check(&text, CodeLanguage::Bash, &list);
    }

    #[test]
    fn check_never_panics_on_strings(text in any::<String>()) {
        let list = CheckList::default();
        let _ = check(&text, CodeLanguage::Python, &list);
        let _ = check(&text, CodeLanguage::Bash, &list);
    }
}

/// tree-sitter-bash's scanner read outside C's `isdigit` table for a `{` before a code point
/// above 255, and crashed the process now and then (found by `check_never_panics_on_strings`).
#[test]
fn bash_with_a_brace_before_wide_characters_is_checked_and_what_it_calls_still_counts() {
    let list = CheckList::default();
    let found = "!k*\u{23a}\u{2b90}{\u{e01b1}\u{1f574}\u{1098e}\u{1f574}\u{c46}\u{23a}\u{c4b}\"\u{468}\u{16b5f}wB\u{103a7}]";
    for _ in 0..200 {
        let _ = check(found, CodeLanguage::Bash, &list);
        for wide in ['\u{100}', '\u{e01b1}', '\u{10ffff}'] {
            let _ = check(&format!("echo {{{wide}1.2}}"), CodeLanguage::Bash, &list);
        }
    }
    let verdict = check(
        "echo caf\u{e9} {\u{e01b1}}\ncurl http://example.com/",
        CodeLanguage::Bash,
        &list,
    );
    assert!(
        verdict.hits.iter().any(|h| h.api.contains("curl")),
        "{verdict:?}"
    );
}
