//! Each error says what is wrong and where: file, line, column, and the document when the file
//! holds several. Checks done after deserialising point at the node they are about.

use std::path::Path;

use pretty_assertions::assert_eq;
use purko_config::parse;

const HEAD: &str = "apiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata:\n  name: a\nspec:\n";

fn error(text: &str) -> (String, String) {
    let e = parse(text, Path::new("examples/agent.yaml")).unwrap_err();
    (e.to_string(), e.hint())
}

fn with_spec(spec: &str) -> String {
    format!("{HEAD}{spec}")
}

fn assert_errors(cases: &[(String, &str)]) {
    let mut wrong = Vec::new();
    for (text, expected) in cases {
        let (got, hint) = error(text);
        assert!(!hint.is_empty(), "{got}: no hint");
        if got != *expected {
            wrong.push(format!("{text}\n  expected: {expected}\n  got:      {got}"));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n\n"));
}

#[test]
fn shape_errors_come_from_serde_with_the_place() {
    assert_errors(&[
        (
            with_spec(
                "  tools:\n    - name: q\n      type: api\n      endpoint:\n        url: http://x\n        method: post\n        endpont: 3\n",
            ),
            "examples/agent.yaml:12:9: spec.tools[0].endpoint: unknown field 'endpont', expected one of 'url', 'method', 'headers', 'timeoutSeconds', 'authScheme', 'authHeader', 'secretRef'",
        ),
        (
            with_spec("  tools:\n    - name: q\n      type: rpc\n"),
            "examples/agent.yaml:8:13: spec.tools[0].type: unknown variant 'rpc', expected one of 'mcp', 'function', 'api', 'builtin'",
        ),
        (
            with_spec("  autonomyLevel: sometimes\n"),
            "examples/agent.yaml:6:18: spec.autonomyLevel: unknown variant 'sometimes', expected one of 'manual', 'restricted', 'supervised', 'full'",
        ),
        (
            with_spec(
                "  tools:\n    - name: q\n      type: api\n      endpoint: {url: 'http://x', method: fetch}\n",
            ),
            "examples/agent.yaml:9:17: spec.tools[0].endpoint: unknown method 'fetch', expected one of GET, POST, PUT, PATCH, DELETE",
        ),
        (
            with_spec(
                "  tools:\n    - name: q\n      type: api\n      endpoint: {url: 'http://x', method: GET, authScheme: bearer, secretRef: {env: X}}\n",
            ),
            "examples/agent.yaml:9:60: spec.tools[0].endpoint.authScheme: unknown variant 'bearer', expected one of 'Bearer', 'Token', 'Basic', 'ApiKey'",
        ),
        (
            with_spec(
                "  tools:\n    - name: q\n      type: api\n      endpoint: {url: 'http://x', method: GET, authScheme: Token, secretRef: {env: A, file: b}}\n",
            ),
            "examples/agent.yaml:9:78: spec.tools[0].endpoint.secretRef: give either env or file, not both",
        ),
        (
            with_spec(
                "  tools:\n    - name: q\n      type: api\n      endpoint: {url: 'http://x', method: GET, authScheme: Token, secretRef: {envv: A}}\n",
            ),
            "examples/agent.yaml:9:78: spec.tools[0].endpoint.secretRef: unknown field 'envv', expected 'env' or 'file'",
        ),
        (
            with_spec("  tools: 3\n"),
            "examples/agent.yaml:6:10: spec.tools: invalid type: integer '3', expected a sequence",
        ),
        (
            "apiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata: {name: a}\n".into(),
            "examples/agent.yaml:1:1: missing field 'spec'",
        ),
        (
            "a: b: c\n".into(),
            "examples/agent.yaml:1:5: mapping values are not allowed in this context",
        ),
    ]);
}

#[test]
fn checks_after_deserialising_point_at_their_node() {
    let api = |endpoint: &str| {
        with_spec(&format!(
            "  tools:\n    - name: q\n      type: api\n      endpoint: {endpoint}\n"
        ))
    };
    assert_errors(&[
        (
            with_spec("  tools:\n    - name: q\n      type: api\n"),
            "examples/agent.yaml:7:7: spec.tools[0]: the api tool 'q' has no endpoint",
        ),
        (
            with_spec("  tools:\n    - name: s\n      type: mcp\n      endpoint: {url: 'http://x', method: GET}\n"),
            "examples/agent.yaml:9:17: spec.tools[0].endpoint: the mcp tool 's' takes no endpoint; only api tools do",
        ),
        (
            with_spec("  tools:\n    - {name: b, type: builtin, description: hi}\n"),
            "examples/agent.yaml:7:45: spec.tools[0].description: the builtin tool 'b' takes no description; only api tools do",
        ),
        (
            with_spec("  tools:\n    - {name: q, type: mcp}\n    - {name: x, type: function}\n    - {name: q, type: mcp}\n"),
            "examples/agent.yaml:9:14: spec.tools[2].name: the tool 'q' is listed twice, first as spec.tools[0]",
        ),
        (
            api("{url: 'http://x', method: GET, timeoutSeconds: 0}"),
            "examples/agent.yaml:9:64: spec.tools[0].endpoint.timeoutSeconds: must be more than 0",
        ),
        (
            api("{url: 'ftp://x', method: GET}"),
            "examples/agent.yaml:9:23: spec.tools[0].endpoint.url: 'ftp://x' is not an http or https URL",
        ),
        (
            api("{url: 'http://x', method: GET, authScheme: Bearer}"),
            "examples/agent.yaml:9:60: spec.tools[0].endpoint.authScheme: Bearer needs a secretRef to read the secret from",
        ),
        (
            api("{url: 'http://x', method: GET, secretRef: {env: TOKEN}}"),
            "examples/agent.yaml:9:59: spec.tools[0].endpoint.secretRef: a secretRef needs an authScheme that says how to send the secret",
        ),
        (
            with_spec("  tools:\n    - name: q\n      type: api\n      inputSchema: [1]\n      endpoint: {url: 'http://x', method: GET}\n"),
            "examples/agent.yaml:9:20: spec.tools[0].inputSchema: must be a mapping: a JSON Schema object",
        ),
        (
            "apiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata: {name: Bad_Name}\nspec: {}\n".into(),
            "examples/agent.yaml:3:18: metadata.name: 'Bad_Name' is not a valid name: use lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters",
        ),
        (
            "apiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata:\n  name: a\n  namespace: prod.eu\nspec: {}\n".into(),
            "examples/agent.yaml:5:14: metadata.namespace: 'prod.eu' is not a valid namespace: use lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters",
        ),
        (
            with_spec("  runtime:\n    codeExecution:\n      sandbox:\n        maxOutputBytes: 0\n"),
            "examples/agent.yaml:9:25: spec.runtime.codeExecution.sandbox.maxOutputBytes: must be more than 0",
        ),
        (
            with_spec("  runtime:\n    codeExecution:\n      sandbox:\n        writablePaths: [/tmp, out]\n"),
            "examples/agent.yaml:9:31: spec.runtime.codeExecution.sandbox.writablePaths[1]: 'out' is not an absolute, normal path",
        ),
        (
            with_spec("  runtime:\n    codeExecution:\n      sandbox:\n        writablePaths: [/work, /tmp/../etc]\n"),
            "examples/agent.yaml:9:32: spec.runtime.codeExecution.sandbox.writablePaths[1]: '/tmp/../etc' is not an absolute, normal path",
        ),
        (
            with_spec("  runtime:\n    codeExecution:\n      sandbox:\n        writablePaths: [/work/out, /tmp, /work]\n"),
            "examples/agent.yaml:9:42: spec.runtime.codeExecution.sandbox.writablePaths[2]: '/work' overlaps writablePaths[0] ('/work/out')",
        ),
        (
            with_spec("  guardrail:\n    rules:\n      - effect: deny\n      - effect: deny\n        tools: [\"a[\"]\n"),
            "examples/agent.yaml:9:9: spec.guardrail.rules[1]: the tool glob 'a[' does not compile: unclosed character class; missing ']'",
        ),
        (
            with_spec("  guardrail:\n    destinations: {allow: [\"*@ok.com\", \"https://\"]}\n"),
            "examples/agent.yaml:7:40: spec.guardrail.destinations.allow[1]: 'https://' is not a usable pattern: a URL pattern needs a host, such as https://hooks.example.com/*",
        ),
        (
            with_spec("  guardrail:\n    approvals: {timeoutSeconds: 0}\n"),
            "examples/agent.yaml:7:33: spec.guardrail.approvals.timeoutSeconds: must be more than 0",
        ),
    ]);
}

#[test]
fn documents_that_are_not_manifests_are_named() {
    assert_errors(&[
        (
            "- a\n- b\n".into(),
            "examples/agent.yaml:1:1: invalid type: sequence, expected a manifest: a mapping with apiVersion, kind, metadata and spec",
        ),
        (
            "just words\n".into(),
            "examples/agent.yaml:1:1: invalid type: string \"just words\", expected a manifest: a mapping with apiVersion, kind, metadata and spec",
        ),
        (
            "apiVersion: purko.io/v1\nkind: Agent\n".into(),
            "examples/agent.yaml:1:13: apiVersion: 'purko.io/v1' is not supported, expected purko.io/v1alpha1",
        ),
        (
            "kind: Agent\nmetadata: {name: a}\n".into(),
            "examples/agent.yaml:1:1: the document has no apiVersion",
        ),
        (
            "apiVersion: purko.io/v1alpha1\nkind: Workflow\n".into(),
            "examples/agent.yaml:2:7: kind: 'Workflow' is not supported yet; supported kinds: Agent, MCPServer",
        ),
        (
            "apiVersion: purko.io/v1alpha1\nkind: Robot\n".into(),
            "examples/agent.yaml:2:7: kind: unknown kind 'Robot'; supported kinds: Agent, MCPServer",
        ),
        (
            "apiVersion: purko.io/v1alpha1\nmetadata: {name: a}\n".into(),
            "examples/agent.yaml:1:1: the document has no kind; supported kinds: Agent, MCPServer",
        ),
        (String::new(), "examples/agent.yaml: the file is empty"),
        (
            "\n# nothing yet\n".into(),
            "examples/agent.yaml: the file holds no manifest, only comments or empty documents",
        ),
        (
            "---\n---\n".into(),
            "examples/agent.yaml: the file holds no manifest, only comments or empty documents",
        ),
    ]);
}

#[test]
fn errors_in_a_file_of_several_documents_name_the_document() {
    let good = crate::agent_yaml("a");
    assert_errors(&[
        (
            format!(
                "{good}---\napiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata: {{name: b}}\nspec: {{tools: [{{name: q, type: api}}]}}\n"
            ),
            "examples/agent.yaml:10:16: document 2: spec.tools[0]: the api tool 'q' has no endpoint",
        ),
        (
            format!(
                "apiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata: {{name: a}}\nspec: {{typo: 1}}\n---\n{good}"
            ),
            "examples/agent.yaml:4:8: document 1: spec: unknown field 'typo', expected one of 'type', 'model', 'autonomyLevel', 'runtime', 'tools', 'guardrail'",
        ),
        (
            format!("{good}---\nkey: [unclosed\n"),
            "examples/agent.yaml:8:1: document 2: did not find expected ',' or ']', while parsing a flow sequence at line 7 column 6",
        ),
        (
            format!("{good}---\n- a\n"),
            "examples/agent.yaml:7:1: document 2: invalid type: sequence, expected a manifest: a mapping with apiVersion, kind, metadata and spec",
        ),
    ]);
}

#[test]
fn hints_say_what_to_do() {
    let (_, hint) = error(&with_spec("  tools:\n    - name: q\n      type: api\n"));
    assert_eq!(
        hint,
        "add endpoint: {url: https://..., method: POST} to the tool"
    );
    let (_, hint) = error("apiVersion: purko.io/v1\nkind: Agent\n");
    assert_eq!(hint, "write apiVersion: purko.io/v1alpha1");
    let (_, hint) = error("apiVersion: purko.io/v1alpha1\nkind: Workflow\n");
    assert_eq!(hint, "write kind: Agent or kind: MCPServer");
    let (_, hint) = error(&with_spec("  bogus: 1\n"));
    assert_eq!(
        hint,
        "remove the field or correct its spelling; the message lists the fields allowed there"
    );
}

const SERVER: &str =
    "apiVersion: purko.io/v1alpha1\nkind: MCPServer\nmetadata:\n  name: fs\nspec:\n";

fn server(spec: &str) -> String {
    format!("{SERVER}{spec}")
}

#[test]
fn mcp_server_fields_of_the_other_transport_are_refused_at_their_place() {
    let stdio = "  transport: stdio\n  command: npx\n";
    let http = "  transport: http\n  url: https://mcp.example.com/mcp\n";
    assert_errors(&[
        (
            server(&format!("{stdio}  url: https://mcp.example.com/mcp\n")),
            "examples/agent.yaml:8:8: spec.url: url belongs to transport: http",
        ),
        (
            server(&format!("{stdio}  headers: {{X-A: b}}\n")),
            "examples/agent.yaml:8:12: spec.headers: headers belongs to transport: http",
        ),
        (
            server(&format!("{http}  command: npx\n")),
            "examples/agent.yaml:8:12: spec.command: command belongs to transport: stdio",
        ),
        (
            server(&format!("{http}  args: []\n")),
            "examples/agent.yaml:8:9: spec.args: args belongs to transport: stdio",
        ),
        (
            server(&format!("{http}  env: {{A: b}}\n")),
            "examples/agent.yaml:8:8: spec.env: env belongs to transport: stdio",
        ),
        (
            server(&format!("{http}  cwd: /srv\n")),
            "examples/agent.yaml:8:8: spec.cwd: cwd belongs to transport: stdio",
        ),
        (
            server("  {transport: http, url: 'https://h/mcp', cwd: /srv}\n"),
            "examples/agent.yaml:6:48: spec.cwd: cwd belongs to transport: stdio",
        ),
    ]);
    let (_, hint) = error(&server(&format!("{stdio}  url: https://h/mcp\n")));
    assert_eq!(
        hint,
        "remove url, or write transport: http; transport: stdio takes command, args, env, cwd"
    );
}

#[test]
fn mcp_server_shape_errors_come_from_serde_with_the_place() {
    assert_errors(&[
        (
            server("  transport: stdio\n  command: npx\n  comand: npx\n"),
            "examples/agent.yaml:8:3: spec: unknown field 'comand', expected one of 'transport', 'command', 'args', 'env', 'cwd', 'url', 'headers', 'toolTimeoutSeconds', 'startupTimeoutSeconds', 'catalogue'",
        ),
        (
            server("  transport: sse\n"),
            "examples/agent.yaml:6:14: spec.transport: unknown variant 'sse', expected 'stdio' or 'http'",
        ),
        (
            server("  command: npx\n"),
            "examples/agent.yaml:6:3: spec: missing field 'transport'",
        ),
        (
            server("  transport: stdio\n  command: npx\n  catalogue:\n    read_file: {read_only: true, readonly: true}\n"),
            "examples/agent.yaml:9:34: spec.catalogue.read_file: unknown field 'readonly', expected one of 'read_only', 'destructive', 'egress'",
        ),
        (
            server("  transport: stdio\n  command: npx\n  catalogue:\n    read_file: {kind: read}\n"),
            "examples/agent.yaml:9:17: spec.catalogue.read_file: unknown field 'kind', expected one of 'read_only', 'destructive', 'egress'",
        ),
        (
            server("  transport: stdio\n  command: npx\n  env:\n    PORT: 8080\n"),
            "examples/agent.yaml:9:11: spec.env.PORT: invalid type: integer '8080', expected a string (quote numbers and booleans) or {secretRef: {env: NAME}} or {secretRef: {file: path}}",
        ),
        (
            server("  transport: stdio\n  command: npx\n  env:\n    TOKEN: {secret: {env: T}}\n"),
            "examples/agent.yaml:9:12: spec.env.TOKEN: unknown field 'secret', expected 'secretRef'",
        ),
        (
            server("  transport: http\n  url: https://h/mcp\n  headers:\n    Authorization: {secretRef: {vault: T}}\n"),
            "examples/agent.yaml:9:32: spec.headers.Authorization.secretRef: unknown field 'vault', expected 'env' or 'file'",
        ),
        (
            server("  transport: stdio\n  command: npx\n  metadata: {}\n"),
            "examples/agent.yaml:8:3: spec: unknown field 'metadata', expected one of 'transport', 'command', 'args', 'env', 'cwd', 'url', 'headers', 'toolTimeoutSeconds', 'startupTimeoutSeconds', 'catalogue'",
        ),
        (
            "apiVersion: purko.io/v1alpha1\nkind: MCPServer\nmetadata: {name: fs}\nspec: {transport: stdio, command: npx}\nstatus: {}\n".into(),
            "examples/agent.yaml:5:1: unknown field 'status', expected one of 'apiVersion', 'kind', 'metadata', 'spec'",
        ),
    ]);
}

#[test]
fn mcp_server_checks_after_deserialising_point_at_their_node() {
    let stdio = "  transport: stdio\n  command: npx\n";
    assert_errors(&[
        (
            server("  transport: stdio\n  args: [x]\n"),
            "examples/agent.yaml:6:14: spec.transport: transport: stdio needs a command",
        ),
        (
            server("  transport: stdio\n  command: ' '\n"),
            "examples/agent.yaml:7:12: spec.command: the command is empty",
        ),
        (
            server("  transport: http\n  headers: {A: b}\n"),
            "examples/agent.yaml:6:14: spec.transport: transport: http needs a url",
        ),
        (
            server("  transport: http\n  url: ftp://h/mcp\n"),
            "examples/agent.yaml:7:8: spec.url: 'ftp://h/mcp' is not an http or https URL",
        ),
        (
            server("  transport: http\n  url: https://h/mcp\n  headers:\n    Bad Header: x\n"),
            "examples/agent.yaml:9:17: spec.headers.Bad Header: 'Bad Header' is not a valid header name",
        ),
        (
            server("  transport: http\n  url: https://h/mcp\n  headers:\n    X-A: \"a\\nb\"\n"),
            "examples/agent.yaml:9:10: spec.headers.X-A: the value of the header 'X-A' holds a line break",
        ),
        (
            server("  transport: http\n  url: https://h/mcp\n  headers:\n    X-A: {secretRef: {env: ''}}\n"),
            "examples/agent.yaml:9:22: spec.headers.X-A.secretRef: the secretRef names no variable or file",
        ),
        (
            server(&format!("{stdio}  env:\n    A=B: x\n")),
            "examples/agent.yaml:9:10: spec.env.A=B: 'A=B' is not a valid environment variable name",
        ),
        (
            server(&format!("{stdio}  env:\n    T: {{secretRef: {{file: ''}}}}\n")),
            "examples/agent.yaml:9:20: spec.env.T.secretRef: the secretRef names no variable or file",
        ),
        (
            server(&format!("{stdio}  cwd: ''\n")),
            "examples/agent.yaml:8:8: spec.cwd: cwd names no folder",
        ),
        (
            server(&format!("{stdio}  toolTimeoutSeconds: 0\n")),
            "examples/agent.yaml:8:23: spec.toolTimeoutSeconds: must be more than 0",
        ),
        (
            server(&format!("{stdio}  startupTimeoutSeconds: 0\n")),
            "examples/agent.yaml:8:26: spec.startupTimeoutSeconds: must be more than 0",
        ),
        (
            server(&format!("{stdio}  catalogue:\n    rm: {{read_only: true, destructive: true}}\n")),
            "examples/agent.yaml:9:9: spec.catalogue.rm: the tool 'rm' cannot be marked both read_only and destructive",
        ),
        (
            server(&format!("{stdio}  catalogue:\n    fetch: {{read_only: true, egress: true}}\n")),
            "examples/agent.yaml:9:12: spec.catalogue.fetch: the tool 'fetch' cannot be marked both read_only and egress",
        ),
        (
            server(&format!("{stdio}  catalogue:\n    '': {{read_only: true}}\n")),
            "examples/agent.yaml:9:9: spec.catalogue.: a catalogue entry needs a tool name",
        ),
        (
            "apiVersion: purko.io/v1alpha1\nkind: MCPServer\nmetadata: {name: github/server}\nspec: {transport: stdio, command: x}\n".into(),
            "examples/agent.yaml:3:18: metadata.name: 'github/server' is not a valid name: use lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters",
        ),
        (
            format!("{}---\n{}", crate::agent_yaml("a"), server("  transport: stdio\n")),
            "examples/agent.yaml:12:14: document 2: spec.transport: transport: stdio needs a command",
        ),
    ]);
}
