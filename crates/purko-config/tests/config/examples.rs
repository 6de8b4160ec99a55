//! The example manifests under `examples/manifests/` load, so the docs never rot.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pretty_assertions::assert_eq;
use purko_config::{
    AgentType, AuthScheme, Endpoint, Language, Manifest, Method, Model, SecretRef, ToolType, load,
    parse,
};
use purko_protocol::{Autonomy, Effect, Kind};
use serde_json::json;

use crate::workspace;

fn manifest_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            manifest_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            found.push(path);
        }
    }
}

#[test]
fn every_example_manifest_loads_alone_and_all_together() {
    let dir = workspace().join("examples/manifests");
    let mut files = Vec::new();
    manifest_files(&dir, &mut files);
    assert!(files.len() >= 2, "examples/manifests holds {files:?}");
    let mut agents = 0;
    for file in &files {
        let loaded = load(std::slice::from_ref(file))
            .unwrap_or_else(|e| panic!("{e}\n  hint: {}", e.hint()));
        assert!(!loaded.agents.is_empty(), "{}", file.display());
        for agent in &loaded.agents {
            if let Some(kinds) = agent.tool_kinds_path() {
                assert!(
                    kinds.is_file(),
                    "{} names {}",
                    file.display(),
                    kinds.display()
                );
            }
        }
        agents += loaded.agents.len();
    }
    assert_eq!(load(&[dir]).unwrap().agents.len(), agents);
}

#[test]
fn the_seed_example_reads_as_written() {
    let path = workspace().join("examples/manifests/multi-tool-agent.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let manifests = parse(&text, &path).unwrap();
    let [Manifest::Agent(agent)] = manifests.as_slice() else {
        panic!("{manifests:?}");
    };
    assert_eq!(agent.key(), "ai-agents/multi-tool-agent");
    assert_eq!(agent.api_version, "purko.io/v1alpha1");
    assert_eq!(agent.document, 1);
    assert_eq!(agent.metadata.labels["team"], "platform");
    let spec = &agent.spec;
    assert_eq!(spec.agent_type, AgentType::Executor);
    assert_eq!(
        spec.model,
        Some(Model {
            provider: "anthropic".into(),
            name: "claude-sonnet-4-6".into()
        })
    );
    assert_eq!(spec.autonomy_level, Autonomy::Supervised);
    let code = spec.runtime.code_execution.as_ref().unwrap();
    assert!(code.enabled);
    assert_eq!(code.languages, [Language::Python, Language::Bash]);
    assert_eq!(code.sandbox.max_execution_seconds, 60);
    assert_eq!(code.sandbox.max_output_bytes, 100_000);
    assert!(!code.sandbox.network_access);
    assert_eq!(code.sandbox.writable_paths, [PathBuf::from("/tmp")]);

    let tools = spec.tools.as_ref().unwrap();
    let names: Vec<(&str, ToolType)> = tools
        .iter()
        .map(|t| (t.name.as_str(), t.tool_type))
        .collect();
    assert_eq!(
        names,
        [
            ("search_code", ToolType::Mcp),
            ("execute_code", ToolType::Function),
            ("query_metrics", ToolType::Api),
            ("static-analysis", ToolType::Builtin),
        ]
    );
    let query = agent.tool("query_metrics").unwrap();
    assert_eq!(
        query.input_schema.as_ref().unwrap()["required"],
        json!(["query"])
    );
    assert_eq!(
        query.endpoint,
        Some(Endpoint {
            url: "http://prometheus.monitoring.svc:9090/api/v1/query_range".into(),
            method: Method::Post,
            headers: [("Content-Type".to_owned(), "application/json".to_owned())]
                .into_iter()
                .collect(),
            timeout_seconds: 30,
            auth_scheme: Some(AuthScheme::Bearer),
            auth_header: None,
            secret_ref: Some(SecretRef::Env("PROM_TOKEN".into())),
        })
    );
    let endpoint = query.endpoint.as_ref().unwrap();
    assert_eq!(endpoint.auth_header(), "Authorization");
    assert_eq!(endpoint.timeout(), Duration::from_secs(30));

    assert_eq!(
        agent.tool_kinds_path(),
        Some(workspace().join("examples/manifests/../tool_kinds.yaml"))
    );
    assert!(agent.infer());
    let policy = agent.policy();
    assert_eq!(policy.rules.len(), 2);
    assert_eq!(policy.rules[0].effect, Effect::Allow);
    assert_eq!(policy.rules[0].kinds, [Kind::Write]);
    assert_eq!(policy.destinations.allow.len(), 2);
    assert_eq!(agent.approval_timeout(), Duration::from_mins(10));
    let approvals = &spec.guardrail.as_ref().unwrap().approvals;
    assert!(approvals.elicitation && approvals.wait);
    assert_eq!(
        approvals.webhook.as_ref().unwrap().url,
        "http://approvals.internal.svc:8080/purko"
    );
}

#[test]
fn defaults_fill_what_a_minimal_agent_leaves_out() {
    let text = "apiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata: {name: tiny}\nspec: {}\n";
    let [Manifest::Agent(agent)] = parse(text, Path::new("tiny.yaml"))
        .unwrap()
        .try_into()
        .unwrap();
    assert_eq!(agent.key(), "default/tiny");
    assert_eq!(agent.spec.agent_type, AgentType::Executor);
    assert_eq!(agent.spec.autonomy_level, Autonomy::Supervised);
    assert_eq!(agent.spec.tools, None);
    assert_eq!(agent.spec.model, None);
    assert_eq!(agent.tool_kinds_path(), None);
    assert!(agent.infer());
    assert_eq!(agent.policy(), purko_guard::RawPolicy::default());
    assert_eq!(agent.approval_timeout(), Duration::from_mins(10));
    assert_eq!(agent.base_dir(), Path::new("."));
}

#[test]
fn no_tools_differs_from_an_empty_list_and_methods_take_any_case() {
    let text = "apiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata: {name: a}\nspec:\n  tools: []\n---\napiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata: {name: b}\nspec:\n  tools:\n    - name: q\n      type: api\n      endpoint: {url: 'https://x.example/q', method: get, secretRef: {file: s/token}, authScheme: ApiKey, authHeader: X-Api-Key}\n";
    let manifests = parse(text, Path::new("conf/agents.yaml")).unwrap();
    let agents: Vec<_> = manifests.iter().map(|Manifest::Agent(a)| a).collect();
    assert_eq!(agents[0].spec.tools, Some(vec![]));
    let endpoint = agents[1].tool("q").unwrap().endpoint.as_ref().unwrap();
    assert_eq!(endpoint.method, Method::Get);
    assert_eq!(endpoint.method.to_string(), "GET");
    assert_eq!(endpoint.auth_header(), "X-Api-Key");
    assert_eq!(endpoint.secret_ref, Some(SecretRef::File("s/token".into())));
    assert_eq!(agents[1].document, 2);
    assert_eq!(agents[1].base_dir(), Path::new("conf"));
}
