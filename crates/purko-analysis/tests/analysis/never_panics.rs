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
