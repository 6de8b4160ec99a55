//! The example manifests under `examples/manifests/` load, so the docs never rot.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pretty_assertions::assert_eq;
use purko_config::{
    AgentType, AuthScheme, Endpoint, HttpTransport, Language, Manifest, McpServer, Method, Model,
    SecretRef, StdioTransport, ToolType, Transport, TransportKind, Value, load, parse,
};
use purko_protocol::{Autonomy, Effect, Kind, Marks};
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
    let (mut agents, mut servers) = (0, 0);
    for file in &files {
        let loaded = load(std::slice::from_ref(file))
            .unwrap_or_else(|e| panic!("{e}\n  hint: {}", e.hint()));
        assert!(
            !loaded.agents.is_empty() || !loaded.mcp_servers.is_empty(),
            "{}",
            file.display()
        );
        for server in &loaded.mcp_servers {
            if let Some(cwd) = server.cwd() {
                assert!(cwd.is_dir(), "{} names {}", file.display(), cwd.display());
            }
        }
        servers += loaded.mcp_servers.len();
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
    let all = load(&[dir]).unwrap();
    assert_eq!(all.agents.len(), agents);
    assert_eq!(all.mcp_servers.len(), servers);
    assert!(servers >= 2, "{servers}");
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
    let manifests: [Manifest; 1] = parse(text, Path::new("tiny.yaml"))
        .unwrap()
        .try_into()
        .unwrap();
    let [Manifest::Agent(agent)] = manifests else {
        panic!("not an agent");
    };
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
    let agents: Vec<_> = manifests
        .iter()
        .filter_map(|m| match m {
            Manifest::Agent(a) => Some(a),
            Manifest::McpServer(_) => None,
        })
        .collect();
    assert_eq!(agents[0].spec.tools, Some(vec![]));
    let endpoint = agents[1].tool("q").unwrap().endpoint.as_ref().unwrap();
    assert_eq!(endpoint.method, Method::Get);
    assert_eq!(endpoint.method.to_string(), "GET");
    assert_eq!(endpoint.auth_header(), "X-Api-Key");
    assert_eq!(endpoint.secret_ref, Some(SecretRef::File("s/token".into())));
    assert_eq!(agents[1].document, 2);
    assert_eq!(agents[1].base_dir(), Path::new("conf"));
}

fn servers(text: &str, path: &str) -> Vec<McpServer> {
    parse(text, Path::new(path))
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|m| match m {
            Manifest::McpServer(server) => server,
            Manifest::Agent(agent) => panic!("{agent:?}"),
        })
        .collect()
}

const READ: Marks = Marks {
    read_only: true,
    destructive: false,
    egress: false,
};
const DESTRUCTIVE: Marks = Marks {
    read_only: false,
    destructive: true,
    egress: false,
};
const EGRESS: Marks = Marks {
    read_only: false,
    destructive: false,
    egress: true,
};

#[test]
fn the_mcp_server_example_reads_as_written() {
    let path = workspace().join("examples/manifests/mcp-servers.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let [fs, tickets]: [McpServer; 2] = servers(&text, path.to_str().unwrap()).try_into().unwrap();

    assert_eq!(fs.key(), "default/filesystem");
    assert_eq!(fs.document, 1);
    assert_eq!(fs.spec.transport.kind(), TransportKind::Stdio);
    assert_eq!(
        fs.spec.transport,
        Transport::Stdio(StdioTransport {
            command: "npx".into(),
            args: vec![
                "-y".into(),
                "@modelcontextprotocol/server-filesystem".into(),
                "/srv/data".into()
            ],
            env: [("LOG_LEVEL".to_owned(), Value::Plain("info".into()))]
                .into_iter()
                .collect(),
            cwd: None,
        })
    );
    assert_eq!(fs.tool_timeout(), Duration::from_mins(1));
    assert_eq!(fs.startup_timeout(), Duration::from_mins(1));
    assert_eq!(
        fs.resolve_env().unwrap(),
        [("LOG_LEVEL".to_owned(), "info".to_owned())]
    );
    assert_eq!(fs.resolve_headers().unwrap(), []);
    assert_eq!(fs.marks("read_text_file"), READ);
    assert_eq!(fs.marks("write_file"), DESTRUCTIVE);
    assert_eq!(fs.marks("not_in_the_catalogue"), Marks::default());
    let names: Vec<&str> = fs.spec.catalogue.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "read_text_file",
            "list_directory",
            "write_file",
            "move_file"
        ]
    );

    assert_eq!(tickets.key(), "ai-agents/tickets");
    assert_eq!(tickets.document, 2);
    assert_eq!(tickets.metadata.labels["team"], "platform");
    assert_eq!(
        tickets.spec.transport,
        Transport::Http(HttpTransport {
            url: "https://mcp.example.com/mcp".into(),
            headers: [
                (
                    "Authorization".to_owned(),
                    Value::Secret(SecretRef::Env("TICKETS_MCP_TOKEN".into()))
                ),
                ("X-Source".to_owned(), Value::Plain("purko".into())),
            ]
            .into_iter()
            .collect(),
        })
    );
    assert_eq!(tickets.tool_timeout(), Duration::from_mins(1));
    assert_eq!(tickets.startup_timeout(), Duration::from_secs(30));
    assert_eq!(tickets.cwd(), None);
    assert_eq!(tickets.marks("search_tickets"), READ);
    assert_eq!(tickets.marks("close_ticket"), DESTRUCTIVE);
    assert_eq!(tickets.marks("notify_customer"), EGRESS);
    assert_eq!(tickets.base_dir(), workspace().join("examples/manifests"));
}

#[test]
fn defaults_fill_what_a_minimal_mcp_server_leaves_out() {
    let text = "apiVersion: purko.io/v1alpha1\nkind: MCPServer\nmetadata: {name: tiny}\nspec: {transport: stdio, command: ./server}\n---\napiVersion: purko.io/v1alpha1\nkind: MCPServer\nmetadata: {name: remote, namespace: tools}\nspec: {transport: http, url: 'http://127.0.0.1:9000/mcp'}\n";
    let [stdio, http]: [McpServer; 2] = servers(text, "tiny.yaml").try_into().unwrap();
    assert_eq!(stdio.key(), "default/tiny");
    assert_eq!(
        stdio.spec.transport,
        Transport::Stdio(StdioTransport {
            command: "./server".into(),
            args: vec![],
            env: indexmap::IndexMap::new(),
            cwd: None,
        })
    );
    assert_eq!(stdio.spec.tool_timeout_seconds, 60);
    assert_eq!(stdio.spec.startup_timeout_seconds, 30);
    assert!(stdio.spec.catalogue.is_empty());
    assert_eq!(stdio.base_dir(), Path::new("."));
    assert_eq!(stdio.cwd(), None);
    assert_eq!(http.key(), "tools/remote");
    assert_eq!(http.spec.transport.kind(), TransportKind::Http);
    assert_eq!(http.spec.transport.kind().to_string(), "http");
    assert_eq!(http.resolve_headers().unwrap(), []);
    assert_eq!(http.resolve_env().unwrap(), []);
}

#[test]
fn a_stdio_server_reads_cwd_timeouts_and_every_value_form() {
    let text = "apiVersion: purko.io/v1alpha1\nkind: MCPServer\nmetadata: {name: gh}\nspec:\n  transport: stdio\n  command: github-mcp\n  args: [stdio]\n  cwd: work/gh\n  env:\n    LOG_LEVEL: debug\n    GITHUB_TOKEN: {secretRef: {env: GITHUB_TOKEN}}\n    API_KEY:\n      secretRef: {file: secrets/gh}\n    EMPTY: ''\n  toolTimeoutSeconds: 5\n  startupTimeoutSeconds: 2\n  catalogue:\n    get_issue: {read_only: true}\n    create_issue: {destructive: true, egress: true}\n    nothing_marked: {}\n";
    let [server]: [McpServer; 1] = servers(text, "conf/servers.yaml").try_into().unwrap();
    let Transport::Stdio(stdio) = &server.spec.transport else {
        panic!("{server:?}");
    };
    assert_eq!(stdio.cwd, Some("work/gh".into()));
    assert_eq!(server.cwd(), Some(Path::new("conf").join("work/gh")));
    let env: Vec<(&str, &Value)> = stdio.env.iter().map(|(k, v)| (k.as_str(), v)).collect();
    assert_eq!(
        env,
        [
            ("LOG_LEVEL", &Value::Plain("debug".into())),
            (
                "GITHUB_TOKEN",
                &Value::Secret(SecretRef::Env("GITHUB_TOKEN".into()))
            ),
            (
                "API_KEY",
                &Value::Secret(SecretRef::File("secrets/gh".into()))
            ),
            ("EMPTY", &Value::Plain(String::new())),
        ]
    );
    assert_eq!(server.tool_timeout(), Duration::from_secs(5));
    assert_eq!(server.startup_timeout(), Duration::from_secs(2));
    assert_eq!(
        server.marks("create_issue"),
        Marks {
            read_only: false,
            destructive: true,
            egress: true
        }
    );
    assert_eq!(server.marks("nothing_marked"), Marks::default());
    // Serialised, a server reads like its manifest; a secret stays a reference.
    let json = serde_json::to_value(Manifest::McpServer(server)).unwrap();
    assert_eq!(json["kind"], "MCPServer");
    assert_eq!(json["spec"]["transport"], "stdio");
    assert_eq!(json["spec"]["command"], "github-mcp");
    assert_eq!(
        json["spec"]["env"]["GITHUB_TOKEN"],
        json!({"secretRef": {"env": "GITHUB_TOKEN"}})
    );
    assert_eq!(json["spec"]["env"]["LOG_LEVEL"], "debug");
    assert_eq!(
        json["spec"]["catalogue"]["get_issue"],
        json!({"read_only": true})
    );
}
