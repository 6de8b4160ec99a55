//! Secrets resolve from the environment or a file, and no error ever shows a value.

use std::path::Path;

use pretty_assertions::assert_eq;
use purko_config::{Manifest, McpServer, SecretRef, Value, parse};

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

fn one_server(text: &str, path: &Path) -> McpServer {
    match parse(text, path).unwrap().pop() {
        Some(Manifest::McpServer(server)) => server,
        other => panic!("{other:?}"),
    }
}

#[test]
fn env_and_header_values_resolve_from_the_environment_and_files() {
    let scratch = Scratch::new();
    scratch.write("conf/secrets/gh", "gh-file-s3cret\n");
    scratch.write("conf/secrets/mcp", "Bearer mcp-file-s3cret\n");
    let var = format!("PURKO_CONFIG_TEST_MCP_SECRET_{}", std::process::id());
    #[expect(
        unsafe_code,
        reason = "set_var is unsafe in edition 2024; the name is unique to this test"
    )]
    unsafe {
        std::env::set_var(&var, "env-s3cret");
    }
    let manifest = scratch.dir.join("conf/servers.yaml");
    let stdio = one_server(
        &format!(
            "apiVersion: purko.io/v1alpha1\nkind: MCPServer\nmetadata: {{name: gh}}\nspec:\n  transport: stdio\n  command: gh-mcp\n  env:\n    LOG_LEVEL: info\n    GITHUB_TOKEN: {{secretRef: {{env: {var}}}}}\n    GH_FILE_TOKEN: {{secretRef: {{file: secrets/gh}}}}\n"
        ),
        &manifest,
    );
    assert_eq!(
        stdio.resolve_env().unwrap(),
        [
            ("LOG_LEVEL".to_owned(), "info".to_owned()),
            ("GITHUB_TOKEN".to_owned(), "env-s3cret".to_owned()),
            ("GH_FILE_TOKEN".to_owned(), "gh-file-s3cret".to_owned()),
        ]
    );
    let http = one_server(
        &format!(
            "apiVersion: purko.io/v1alpha1\nkind: MCPServer\nmetadata: {{name: remote}}\nspec:\n  transport: http\n  url: https://mcp.example.com/mcp\n  headers:\n    Authorization: {{secretRef: {{file: secrets/mcp}}}}\n    X-Token: {{secretRef: {{env: {var}}}}}\n"
        ),
        &manifest,
    );
    assert_eq!(
        http.resolve_headers().unwrap(),
        [
            (
                "Authorization".to_owned(),
                "Bearer mcp-file-s3cret".to_owned()
            ),
            ("X-Token".to_owned(), "env-s3cret".to_owned()),
        ]
    );
    // Neither Debug nor serialisation carries a secret's value, only where it comes from.
    for shown in [
        format!("{http:?}"),
        serde_json::to_string(&http).unwrap(),
        format!("{stdio:?}"),
        serde_json::to_string(&stdio).unwrap(),
    ] {
        assert!(!shown.contains("s3cret"), "{shown}");
    }
    assert_eq!(
        Value::Plain("x".into())
            .resolve(Path::new("/nowhere"))
            .unwrap(),
        "x"
    );
}

#[test]
fn an_unusable_env_or_header_secret_is_named_and_never_shown() {
    let scratch = Scratch::new();
    scratch.write("secrets/blank", "\n");
    let unset = format!("PURKO_CONFIG_TEST_MCP_UNSET_{}", std::process::id());
    let manifest = scratch.dir.join("servers.yaml");
    let stdio = one_server(
        &format!(
            "apiVersion: purko.io/v1alpha1\nkind: MCPServer\nmetadata: {{name: gh}}\nspec:\n  transport: stdio\n  command: gh-mcp\n  env:\n    TOKEN: {{secretRef: {{env: {unset}}}}}\n"
        ),
        &manifest,
    );
    let error = stdio.resolve_env().unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("the secret environment variable {unset} is not set")
    );
    let http = one_server(
        "apiVersion: purko.io/v1alpha1\nkind: MCPServer\nmetadata: {name: remote}\nspec:\n  transport: http\n  url: https://mcp.example.com/mcp\n  headers:\n    Authorization: {secretRef: {file: secrets/blank}}\n",
        &manifest,
    );
    let error = http.resolve_headers().unwrap_err();
    assert_eq!(
        scratch.show(&error),
        "cannot use the secret file <dir>/secrets/blank: it is empty"
    );
    let error = Value::Secret(SecretRef::File("secrets/none".into()))
        .resolve(&scratch.dir)
        .unwrap_err();
    assert_eq!(
        scratch.show(&error),
        "cannot use the secret file <dir>/secrets/none: it does not exist"
    );
}
