//! `purko`: the guarded tool layer's command line: drafting tool kinds, checking calls,
//! serving the API, and answering approvals.

mod analyze;
mod client;
mod exec;
mod gateway;
mod judge;
mod mcp;
mod serve;
mod start;

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use purko_protocol::Autonomy;

/// Drafting and judging allocate many small values (JSON schemas, words, reasons); mimalloc
/// serves them markedly faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc 3's `mi_option_t` (the sys crate names the options
/// around it, not this one): between `eager_commit_delay` (14) and `use_numa_nodes` (16).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// mimalloc 3 gives freed memory back to the system a second after it is freed; a busy
/// `purko serve` then keeps about a megabyte more resident than it uses. Ten milliseconds (the
/// delay of mimalloc 2) costs no measurable speed (`cargo bench -p purko-cli --bench gateway --
/// load`). Set once, before any other thread starts.
#[allow(unsafe_code)]
fn give_back_freed_memory_sooner() {
    // SAFETY: mi_option_set stores one option's value; no other thread runs yet.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 10) };
}

#[derive(Parser, Debug)]
#[command(
    name = "purko",
    version,
    about = "Purko: the guarded tool layer for AI agents."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Work with `tool_kinds.yaml`, the file that says what each tool does.
    Kinds {
        #[command(subcommand)]
        command: KindsCommand,
    },
    /// Validate, classify and judge one tool call; print the decision.
    Check(CheckArgs),
    /// Serve the HTTP API: agents' tools, guarded calls, decisions and approvals.
    Serve(ServeArgs),
    /// Serve one agent's guarded tools as an MCP server (for Claude Desktop, Cursor, ...).
    ///
    /// Every tool call runs through the same pipeline as `purko serve`, on the same store
    /// (`PURKO_HOME`): a call waiting for a person is released by `purko approvals approve` or
    /// by the API of a `purko serve` sharing that store. Standard output carries MCP only; logs
    /// go to standard error (`PURKO_LOG`, default `warn`). Exits when the client closes
    /// standard input. Over HTTP, `purko serve` has the same gateway at
    /// `/mcp/<namespace>/<name>` (agent or operator token).
    Gateway(GatewayArgs),
    /// Serve the drafting server for one agent's `tool_kinds.yaml` as MCP on standard input
    /// and output (seed 001). It never calls a model.
    ///
    /// Tools: `writes_file` drafts the file (uncertain tools first; a person's entries kept as
    /// written), `set_tool_kinds` records an assistant's proposals as `source: assistant` in
    /// their own section, `explain_decision` explains a decision id from the store
    /// (`PURKO_HOME`). The prompt `classify-tools` hands the client's assistant the uncertain
    /// tools. Logs go to standard error (`PURKO_LOG`, default `warn`).
    Mcp(McpArgs),
    /// Call a tool through a running server, as an agent would; print the observation.
    Call(CallArgs),
    /// Explain a decision by its id, from a running server's store.
    Explain(ExplainArgs),
    /// Run a python or bash file in the sandbox, as an agent's `execute_code` would; print the
    /// observation.
    ///
    /// The program gets fresh namespaces, a read-only root, no network (`--network`: HTTP and
    /// HTTPS through the egress guard only), rlimits, seccomp and Landlock; none of this can be
    /// turned off. Exit code 0 when the program ran within its limits and exited 0, 1 otherwise
    /// (the observation is printed either way), 2 for a usage error.
    Exec(exec::ExecArgs),
    /// Analyze Python and Go source for security weaknesses (the `static-analysis` tool), or
    /// with `--check` give the sandbox's pre-execution verdict on python and bash.
    ///
    /// Prints one JSON line per finding, with `file` as given: rule (Bandit's B…, gosec's G…,
    /// Purko's PK…), kind, severity, confidence, line, column, message, cwe. With `--check`,
    /// one line per file: {"file", "verdict": "allow"|"reject", "hits": [{"line", "api",
    /// "why"}]}. Exits 0 whatever is found, 1 when a file cannot be read, 2 on a usage error.
    Analyze(analyze::AnalyzeArgs),
    /// List, show, approve or reject the calls waiting for a person.
    Approvals {
        #[command(subcommand)]
        command: ApprovalsCommand,
    },
}

#[derive(clap::Args, Debug)]
struct ServeArgs {
    /// Manifest files or folders of them (`kind: Agent`, several per file).
    #[arg(value_name = "MANIFESTS")]
    manifests: Vec<PathBuf>,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:8082", value_name = "ADDR")]
    listen: SocketAddr,
    /// Threads that serve requests (0: one per core). One keeps each call on one thread, which
    /// is the fastest while the MCP servers Purko starts share the machine's cores; raise it
    /// when one core cannot keep up with the agents and clients.
    #[arg(long, default_value_t = 1, value_name = "N")]
    threads: usize,
}

#[derive(clap::Args, Debug)]
struct GatewayArgs {
    /// Serve MCP on standard input and output (the transport desktop clients start).
    #[arg(long)]
    stdio: bool,
    /// The agent whose tools to serve, as namespace/name.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    agent: String,
    /// Manifest files or folders of them (`kind: Agent`, `kind: MCPServer`).
    #[arg(value_name = "MANIFESTS")]
    manifests: Vec<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct McpArgs {
    /// The agent to draft for, as namespace/name; needed when the manifests define several.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    agent: Option<String>,
    /// Manifest files or folders of them (`kind: Agent`, `kind: MCPServer`).
    #[arg(value_name = "MANIFESTS")]
    manifests: Vec<PathBuf>,
}

#[derive(clap::Args, Debug, Clone)]
struct ServerArgs {
    /// The Purko server to talk to.
    #[arg(long, default_value = "http://127.0.0.1:8082", value_name = "URL")]
    server: String,
}

#[derive(clap::Args, Debug)]
struct CallArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// The agent, as namespace/name.
    #[arg(long)]
    agent: String,
    /// The conversation's id: approvals and idempotency are kept per session.
    #[arg(long, default_value = "cli")]
    session: String,
    /// The step within the session: the same step is the same call, executed once.
    #[arg(long)]
    step: String,
    /// The tool's name.
    name: String,
    /// The arguments as a JSON object.
    #[arg(default_value = "{}")]
    arguments: String,
    /// Return at once with the approval's id when the call needs a person's yes.
    #[arg(long)]
    no_wait: bool,
    /// Your own idempotency key instead of one derived from session, step and tool.
    #[arg(long)]
    idempotency_key: Option<String>,
}

#[derive(clap::Args, Debug)]
struct ExplainArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// The decision id, as observations carry it: d_<kinds>_<i|n>_<policy>_<ulid>.
    decision_id: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    format: CheckFormat,
}

#[derive(Subcommand, Debug)]
enum ApprovalsCommand {
    /// List approvals, pending ones by default.
    List {
        #[command(flatten)]
        server: ServerArgs,
        /// pending, approved, rejected, expired, or all.
        #[arg(long, default_value = "pending")]
        status: String,
        /// Only this agent's (namespace/name).
        #[arg(long)]
        agent: Option<String>,
        #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
        format: CheckFormat,
    },
    /// Show one approval: the payload, why it needs a yes, how sure the kind is.
    Show {
        #[command(flatten)]
        server: ServerArgs,
        id: String,
        #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
        format: CheckFormat,
    },
    /// Approve a waiting call: it runs exactly as shown.
    Approve {
        #[command(flatten)]
        server: ServerArgs,
        id: String,
        /// `session` also lets the same tool with the same arguments run again in this session.
        #[arg(long, value_enum, default_value_t = Scope::Once)]
        scope: Scope,
        #[arg(long)]
        comment: Option<String>,
    },
    /// Reject a waiting call; the agent is told, with your reason.
    Reject {
        #[command(flatten)]
        server: ServerArgs,
        id: String,
        #[arg(long)]
        reason: Option<String>,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Scope {
    Once,
    Session,
}

#[derive(Subcommand, Debug)]
enum KindsCommand {
    /// Draft a `tool_kinds.yaml` for a list of tools: each with its kind, source and reason,
    /// the uncertain ones first.
    Draft(DraftArgs),
}

#[derive(clap::Args, Debug)]
struct Catalog {
    /// Tools as an MCP tools/list result ({"tools": [...]}) or a bare JSON array.
    #[arg(long, value_name = "FILE")]
    tools: PathBuf,
    /// A `tool_kinds.yaml` whose entries decide the kinds of the tools it names.
    #[arg(long, value_name = "FILE")]
    tool_kinds: Option<PathBuf>,
    /// Turn inference off: tools neither the file nor the catalogue names are writes.
    #[arg(long)]
    no_infer: bool,
}

#[derive(clap::Args, Debug)]
struct DraftArgs {
    #[command(flatten)]
    catalog: Catalog,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DraftFormat::Yaml)]
    format: DraftFormat,
    /// Write to this file instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct CheckArgs {
    #[command(flatten)]
    catalog: Catalog,
    /// A YAML file with the rules: and destinations: of the agent's guardrail.
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
    /// The agent's autonomy level.
    #[arg(long, default_value = "supervised", value_parser = parse_autonomy)]
    autonomy: Autonomy,
    /// The call, as JSON: {"name": "...", "arguments": {...}}.
    #[arg(long, value_name = "JSON")]
    call: String,
    /// Output format: the decision as JSON, or its explanation as text.
    #[arg(long, value_enum, default_value_t = CheckFormat::Json)]
    format: CheckFormat,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum DraftFormat {
    Yaml,
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum CheckFormat {
    Json,
    Text,
}

fn parse_autonomy(text: &str) -> Result<Autonomy, String> {
    text.parse()
        .map_err(|e: purko_protocol::ParseWordError| e.to_string())
}

/// A failure the person can fix: what went wrong, what to do, and the exit code.
struct Failure {
    message: String,
    hint: String,
    code: u8,
}

impl Failure {
    fn new(message: impl Into<String>, hint: impl Into<String>, code: u8) -> Self {
        Self {
            message: message.into(),
            hint: hint.into(),
            code,
        }
    }
}

impl From<purko_guard::Error> for Failure {
    fn from(error: purko_guard::Error) -> Self {
        Self {
            hint: error.hint(),
            message: error.to_string(),
            code: 1,
        }
    }
}

fn main() -> ExitCode {
    give_back_freed_memory_sooner();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage_error(&error),
    };
    let result = match cli.command {
        Command::Kinds {
            command: KindsCommand::Draft(args),
        } => judge::draft(&args),
        Command::Check(args) => judge::check(&args),
        Command::Serve(args) => serve::serve(&args),
        Command::Gateway(args) => gateway::gateway(&args),
        Command::Mcp(args) => mcp::mcp(&args),
        Command::Call(args) => client::call(&args),
        Command::Explain(args) => client::explain(&args),
        Command::Approvals { command } => client::approvals(command),
        Command::Exec(args) => match exec::exec(&args) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(1),
            Err(failure) => Err(failure),
        },
        Command::Analyze(args) => analyze::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "error: {}", failure.message);
            let _ = writeln!(err, "hint: {}", failure.hint);
            ExitCode::from(failure.code)
        }
    }
}

/// Help and version go to standard output with exit code 0; a usage error keeps clap's message
/// and adds the `hint:` line every Purko error ends with, exit code 2.
fn usage_error(error: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        let _ = error.print();
        return ExitCode::SUCCESS;
    }
    let command = match std::env::args().nth(1).as_deref() {
        Some("check") => "purko check --help",
        Some("kinds") => "purko kinds draft --help",
        Some("serve") => "purko serve --help",
        Some("gateway") => "purko gateway --help",
        Some("mcp") => "purko mcp --help",
        Some("call") => "purko call --help",
        Some("explain") => "purko explain --help",
        Some("approvals") => "purko approvals --help",
        Some("exec") => "purko exec --help",
        Some("analyze") => "purko analyze --help",
        _ => "purko --help",
    };
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{}", error.render());
    let _ = writeln!(err, "hint: run `{command}` to see what it takes");
    ExitCode::from(2)
}
