use pretty_assertions::assert_eq;
use purko_analysis::{
    Confidence, Finding, Kind, MAX_SOURCE_BYTES, Severity, SourceLanguage, analyze,
};

fn python(code: &str) -> Vec<Finding> {
    analyze(code.as_bytes(), SourceLanguage::Python)
}

fn go(code: &str) -> Vec<Finding> {
    analyze(code.as_bytes(), SourceLanguage::Go)
}

fn rules(findings: &[Finding]) -> Vec<(u32, &'static str)> {
    findings.iter().map(|f| (f.line, f.rule)).collect()
}

#[test]
fn a_finding_serialises_with_exactly_the_tool_fields() {
    let findings = python("eval(x)\n");
    let json = serde_json::to_value(&findings[0]).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "rule": "B307",
            "kind": "eval",
            "severity": "HIGH",
            "confidence": "HIGH",
            "line": 1,
            "column": 1,
            "message": "eval: eval runs a string as Python code: use ast.literal_eval for data",
            "cwe": 95
        })
    );
}

#[test]
fn severities_follow_the_issue() {
    let high = [
        "eval(x)\n",
        "exec(x)\n",
        "password = 'hunter22'\n",
        "import requests\nrequests.get(u, verify=False, timeout=3)\n",
        "import pickle\npickle.loads(b)\n",
    ];
    for code in high {
        let findings = python(code);
        let worst = findings.iter().map(|f| f.severity).max();
        assert_eq!(worst, Some(Severity::High), "{code}: {findings:?}");
    }
    assert_eq!(python("assert x\n")[0].severity, Severity::Low);
    let bare = python("try:\n    f()\nexcept:\n    raise\n");
    assert_eq!(
        (bare[0].kind, bare[0].severity),
        (Kind::BareExcept, Severity::Low)
    );
}

#[test]
fn aliases_are_resolved_for_the_analyzer_too() {
    let code = "import os as o\nfrom subprocess import Popen as P\nimport hashlib as h\n\
                o.system(c)\nP(c, shell=True)\nh.md5(b'')\n";
    let found = rules(&python(code));
    for expected in [(4, "B605"), (5, "B602"), (6, "B324")] {
        assert!(found.contains(&expected), "{expected:?} not in {found:?}");
    }
}

#[test]
fn go_import_names_are_resolved() {
    let code = "package p\nimport (\n\tx \"crypto/md5\"\n\tr \"math/rand\"\n)\n\
                func f() { x.New(); r.Int() }\n";
    let found = rules(&go(code));
    assert!(found.contains(&(6, "G401")), "{found:?}");
    assert!(found.contains(&(6, "G404")), "{found:?}");
    let crypto_rand = "package p\nimport \"crypto/rand\"\nfunc f() { rand.Read(nil) }\n";
    assert_eq!(rules(&go(crypto_rand)), []);
}

#[test]
fn secrets_are_found_by_shape_with_entropy_raising_confidence() {
    let by_shape = python("x = 'AKIAIOSFODNN7EXAMPLE'\n");
    assert_eq!(
        (by_shape[0].rule, by_shape[0].confidence),
        ("PK101", Confidence::High)
    );
    let by_name = python("password = 'tulips'\n");
    assert_eq!(
        (by_name[0].rule, by_name[0].confidence),
        ("B105", Confidence::Medium)
    );
    let random = python("password = 'q8Zr2mT1x9KbW4pLs7Vd'\n");
    assert_eq!(random[0].confidence, Confidence::High);
    assert_eq!(
        python("password = ''\nprompt = 'Password: '\ntoken = '('\n"),
        []
    );
}

#[test]
fn nosec_comments_do_not_hide_findings() {
    assert_eq!(rules(&python("eval(x)  # nosec\n")), [(1, "B307")]);
}

#[test]
fn a_pep_263_latin_1_file_is_decoded() {
    let source = b"# -*- coding: latin-1 -*-\ns = '\xe9t\xe9'\neval(s)\n";
    assert_eq!(
        rules(&analyze(source, SourceLanguage::Python)),
        [(3, "B307")]
    );
}

#[test]
fn invalid_utf8_without_a_coding_line_is_reported() {
    let findings = analyze(b"s = '\xe9t\xe9'\n", SourceLanguage::Python);
    assert_eq!(findings.len(), 1);
    assert_eq!(
        (findings[0].rule, findings[0].kind),
        ("PK002", Kind::UnsupportedInput)
    );
    assert!(
        findings[0].message.contains("PEP 263"),
        "{}",
        findings[0].message
    );
    let go_findings = analyze(b"package p\n// \xff\n", SourceLanguage::Go);
    assert_eq!((go_findings[0].rule, go_findings[0].line), ("PK002", 2));
}

#[test]
fn binary_input_is_reported_not_parsed() {
    let findings = analyze(b"\x7fELF\x02\x01\x01\0\0\0", SourceLanguage::Python);
    assert_eq!(findings.len(), 1);
    assert!(findings[0].message.contains("binary"), "{findings:?}");
}

#[test]
fn huge_input_is_reported_not_parsed() {
    let huge = "x = 1\n".repeat(MAX_SOURCE_BYTES / 6 + 10);
    assert!(huge.len() > 4 * 1024 * 1024);
    let findings = python(&huge);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].kind, Kind::UnsupportedInput);
    assert!(
        findings[0]
            .message
            .contains("larger than the analyzer's limit")
    );
}

#[test]
fn large_input_under_the_limit_is_analyzed() {
    let mut code = "def f(a):\n    return a + 1\n".repeat(100_000);
    code.push_str("eval(x)\n");
    let findings = python(&code);
    assert_eq!(rules(&findings), [(200_001, "B307")]);
}

#[test]
fn invalid_syntax_gives_a_parse_finding_and_the_rest() {
    let findings = python("eval(x)\ndef f(:\n    pass\n");
    let found: Vec<_> = findings.iter().map(|f| (f.line, f.kind)).collect();
    assert!(found.contains(&(1, Kind::Eval)), "{found:?}");
    assert!(
        found.iter().any(|(_, k)| *k == Kind::ParseError),
        "{found:?}"
    );
    let go_findings = go("package p\nfunc f( {\n");
    assert!(go_findings.iter().any(|f| f.kind == Kind::ParseError));
}

#[test]
fn deep_nesting_is_reported_not_recursed_into() {
    let deep = format!("x = {}1{}\n", "(".repeat(50_000), ")".repeat(50_000));
    let findings = python(&deep);
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert!(findings[0].message.contains("nests deeper"), "{findings:?}");
    let deep_go = format!(
        "package p\nvar x = {}1{}\n",
        "(".repeat(50_000),
        ")".repeat(50_000)
    );
    assert_eq!(go(&deep_go)[0].kind, Kind::UnsupportedInput);
    let check = purko_analysis::check(
        &deep,
        purko_analysis::CodeLanguage::Python,
        &purko_analysis::CheckList::default(),
    );
    assert_eq!(check.hits[0].api, "nesting");
}

#[test]
fn source_language_follows_the_extension() {
    use std::path::Path;
    assert_eq!(
        SourceLanguage::from_path(Path::new("a/b.py")),
        Some(SourceLanguage::Python)
    );
    assert_eq!(
        SourceLanguage::from_path(Path::new("main.go")),
        Some(SourceLanguage::Go)
    );
    assert_eq!(SourceLanguage::from_path(Path::new("README")), None);
}
