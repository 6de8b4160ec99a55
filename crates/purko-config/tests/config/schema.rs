//! The committed JSON Schema is the generated one, and every example manifest satisfies it.

use pretty_assertions::assert_eq;

use crate::workspace;

const SCHEMA: &str = "schemas/purko.manifest.schema.json";

fn generated() -> String {
    let mut text = serde_json::to_string_pretty(&purko_config::json_schema()).unwrap();
    text.push('\n');
    text
}

#[test]
fn the_committed_schema_is_the_generated_one() {
    let path = workspace().join(SCHEMA);
    let generated = generated();
    if std::env::var_os("PURKO_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{SCHEMA} differs from the schema the manifest types generate; regenerate it with\n    PURKO_UPDATE_SCHEMA=1 cargo test -p purko-config --test config schema\nand commit the result"
    );
}

#[test]
fn every_example_manifest_satisfies_the_schema() {
    let schema = purko_config::json_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let dir = workspace().join("examples/manifests");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "yaml" && e != "yml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for document in yaml_serde::Deserializer::from_str(&text) {
            let value: serde_json::Value = serde::Deserialize::deserialize(document).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .map(|e| format!("{e} at {}", e.instance_path()))
                .collect();
            assert_eq!(errors, Vec::<String>::new(), "{}", path.display());
            checked += 1;
        }
    }
    assert!(checked >= 3, "{checked}");
}

#[test]
fn the_schema_refuses_what_the_loader_refuses_in_shape() {
    let schema = purko_config::json_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let bad = serde_json::json!({
        "apiVersion": "purko.io/v1alpha1", "kind": "Agent",
        "metadata": {"name": "a"},
        "spec": {"tools": [{"name": "q", "type": "api", "endpoint": {"url": "http://x", "method": "post", "endpont": 1}}]}
    });
    assert!(!validator.is_valid(&bad));
    let good = serde_json::json!({
        "apiVersion": "purko.io/v1alpha1", "kind": "Agent",
        "metadata": {"name": "a"},
        "spec": {"tools": [{"name": "q", "type": "api", "endpoint": {"url": "http://x", "method": "post", "secretRef": {"env": "X"}, "authScheme": "Bearer"}}]}
    });
    assert!(
        validator.is_valid(&good),
        "{:?}",
        validator
            .iter_errors(&good)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    );
}
