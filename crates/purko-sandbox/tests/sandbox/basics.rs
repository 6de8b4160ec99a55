use pretty_assertions::assert_eq;

use crate::support::{bash, python};

#[tokio::test(flavor = "multi_thread")]
async fn python_prints_and_exits() {
    let outcome =
        python("import sys\nprint('hello')\nprint('oops', file=sys.stderr)\nsys.exit(3)").await;
    assert_eq!(outcome.stdout, "hello\n", "{outcome:?}");
    assert_eq!(outcome.stderr, "oops\n");
    assert_eq!(outcome.exit_code, Some(3));
    assert_eq!(outcome.signal, None);
    assert_eq!(outcome.limit, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn bash_runs() {
    let outcome = bash("echo hi; id -u; hostname; ls /").await;
    assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
    println!("{outcome:?}");
}
