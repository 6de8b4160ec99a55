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
    #[expect(
        clippy::disallowed_methods,
        reason = "a switch for the person regenerating the schema"
    )]
    let update = std::env::var_os("PURKO_UPDATE_SCHEMA").is_some();
    if update {
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

#[test]
fn the_schema_reads_both_kinds_as_exactly_one_of_them() {
    let schema = purko_config::json_schema();
    let variants = schema["oneOf"].as_array().unwrap();
    assert_eq!(variants.len(), purko_config::SUPPORTED_KINDS.len());
    assert!(schema.get("anyOf").is_none());
    let validator = jsonschema::validator_for(&schema).unwrap();
    let server = |spec: serde_json::Value| {
        serde_json::json!({
            "apiVersion": "purko.io/v1alpha1", "kind": "MCPServer",
            "metadata": {"name": "fs"}, "spec": spec
        })
    };
    let good = server(serde_json::json!({
        "transport": "stdio", "command": "npx", "args": ["-y", "x"],
        "env": {"A": "b", "T": {"secretRef": {"env": "T"}}},
        "catalogue": {"read_file": {"read_only": true}, "rm": {"destructive": true, "egress": false}}
    }));
    assert!(
        validator.is_valid(&good),
        "{:?}",
        validator
            .iter_errors(&good)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    );
    let http = server(serde_json::json!({
        "transport": "http", "url": "https://h/mcp",
        "headers": {"Authorization": {"secretRef": {"file": "secrets/t"}}, "X-A": "b"},
        "toolTimeoutSeconds": 5
    }));
    assert!(validator.is_valid(&http), "{http}");
    for bad in [
        server(serde_json::json!({"transport": "sse", "url": "http://x"})),
        server(serde_json::json!({"command": "npx"})),
        server(serde_json::json!({"transport": "stdio", "command": "npx", "comand": "npx"})),
        server(
            serde_json::json!({"transport": "stdio", "command": "npx", "toolTimeoutSeconds": 0}),
        ),
        server(serde_json::json!({"transport": "stdio", "command": "npx", "env": {"A": 1}})),
        server(
            serde_json::json!({"transport": "stdio", "command": "npx", "env": {"A": {"secretRef": {"env": "A"}, "x": 1}}}),
        ),
        server(
            serde_json::json!({"transport": "stdio", "command": "npx", "catalogue": {"t": {"readOnly": true}}}),
        ),
        // The other transport's fields, and a transport without its required field.
        server(serde_json::json!({"transport": "stdio", "command": "npx", "url": "http://x"})),
        server(serde_json::json!({"transport": "stdio", "command": "npx", "headers": {}})),
        server(serde_json::json!({"transport": "stdio"})),
        server(serde_json::json!({"transport": "http", "url": "http://x", "command": "npx"})),
        server(serde_json::json!({"transport": "http", "url": "http://x", "cwd": "/srv"})),
        server(serde_json::json!({"transport": "http", "headers": {}})),
        // An Agent's spec under kind: MCPServer, and the other way round.
        server(serde_json::json!({"tools": []})),
        serde_json::json!({"apiVersion": "purko.io/v1alpha1", "kind": "Agent", "metadata": {"name": "a"}, "spec": {"transport": "stdio", "command": "npx"}}),
    ] {
        assert!(!validator.is_valid(&bad), "{bad}");
    }
}

#[test]
fn the_catalogue_schema_has_the_fields_of_marks() {
    let all = purko_protocol::Marks {
        read_only: true,
        destructive: true,
        egress: true,
    };
    let serde_json::Value::Object(fields) = serde_json::to_value(all).unwrap() else {
        panic!("Marks is not an object");
    };
    let schema = purko_config::json_schema();
    let properties = schema["$defs"]["Marks"]["properties"].as_object().unwrap();
    let mut in_schema: Vec<&String> = properties.keys().collect();
    let mut in_marks: Vec<&String> = fields.keys().collect();
    in_schema.sort();
    in_marks.sort();
    assert_eq!(in_schema, in_marks);
    assert_eq!(schema["$defs"]["Marks"]["additionalProperties"], false);
}
