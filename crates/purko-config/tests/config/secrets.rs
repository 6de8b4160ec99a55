//! Secrets resolve from the environment or a file, and no error ever shows a value.

use std::path::Path;

use pretty_assertions::assert_eq;
use purko_config::SecretRef;

use crate::Scratch;

#[test]
fn a_secret_comes_from_a_variable_without_its_trailing_newline() {
    let name = format!("PURKO_CONFIG_TEST_SECRET_{}", std::process::id());
    // Tests run on several threads; this variable is this test's alone.
    #[expect(
        unsafe_code,
        reason = "set_var is unsafe in edition 2024; the name is unique to this test"
    )]
    unsafe {
        std::env::set_var(&name, "s3cret-value\n");
    }
    let secret = SecretRef::Env(name.clone());
    assert_eq!(secret.resolve(Path::new(".")).unwrap(), "s3cret-value");
    assert_eq!(secret.describe(), format!("environment variable {name}"));
}

#[test]
fn a_missing_variable_is_named_in_the_error() {
    let name = format!("PURKO_CONFIG_TEST_UNSET_{}", std::process::id());
    let error = SecretRef::Env(name.clone())
        .resolve(Path::new("."))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("the secret environment variable {name} is not set")
    );
    assert!(
        error.hint().starts_with(&format!("set {name} ")),
        "{}",
        error.hint()
    );
}

#[test]
fn a_secret_file_is_read_relative_to_the_manifest_folder() {
    let scratch = Scratch::new();
    scratch.write("secrets/prom-token", "file-s3cret\r\n");
    let secret = SecretRef::File("secrets/prom-token".into());
    assert_eq!(secret.resolve(&scratch.dir).unwrap(), "file-s3cret");

    let missing = SecretRef::File("secrets/none".into())
        .resolve(&scratch.dir)
        .unwrap_err();
    assert_eq!(
        scratch.show(&missing),
        "cannot use the secret file <dir>/secrets/none: it does not exist"
    );
    scratch.write("secrets/blank", "\n");
    let blank = SecretRef::File("secrets/blank".into())
        .resolve(&scratch.dir)
        .unwrap_err();
    assert_eq!(
        scratch.show(&blank),
        "cannot use the secret file <dir>/secrets/blank: it is empty"
    );
}
