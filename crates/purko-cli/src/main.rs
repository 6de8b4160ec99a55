//! `purko`: drafts tool kinds and checks tool calls against Purko's guardrail.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use purko_guard::{
    Catalogue, Guard, GuardConfig, Inference, KindsFile, Policy, draft_tools_file, explain,
};
use purko_protocol::{Autonomy, ToolCall};

/// Drafting and judging allocate many small values (JSON schemas, words, reasons); mimalloc
/// serves them markedly faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage_error(&error),
    };
    let result = match cli.command {
        Command::Kinds {
            command: KindsCommand::Draft(args),
        } => draft(&args),
        Command::Check(args) => check(&args),
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
        _ => "purko --help",
    };
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{}", error.render());
    let _ = writeln!(err, "hint: run `{command}` to see what it takes");
    ExitCode::from(2)
}

fn guard(catalog: &Catalog, policy: Policy, autonomy: Autonomy) -> Result<Guard, Failure> {
    let catalogue = Catalogue::load(&catalog.tools)?;
    let kinds = catalog
        .tool_kinds
        .as_deref()
        .map(KindsFile::load)
        .transpose()?;
    let inference = inference(catalog);
    Ok(Guard::new(GuardConfig {
        catalogue,
        kinds,
        inference,
        policy,
        autonomy,
    }))
}

fn inference(catalog: &Catalog) -> Inference {
    if catalog.no_infer {
        Inference::Off
    } else {
        Inference::On
    }
}

fn draft(args: &DraftArgs) -> Result<(), Failure> {
    let catalog = &args.catalog;
    let text = std::fs::read_to_string(&catalog.tools).map_err(|source| {
        Failure::from(purko_guard::Error::Read {
            path: catalog.tools.clone(),
            source,
        })
    })?;
    let kinds = catalog
        .tool_kinds
        .as_deref()
        .map(KindsFile::load)
        .transpose()?;
    // One tool in memory at a time: a catalogue of any size drafts in one pass.
    let file = draft_tools_file(&text, &catalog.tools, kinds, inference(catalog))?;
    let text = match args.format {
        DraftFormat::Yaml => file.to_yaml(),
        DraftFormat::Json => file.to_json(),
    };
    match &args.out {
        Some(path) => write_file(path, &text),
        None => print(&text),
    }
}

fn check(args: &CheckArgs) -> Result<(), Failure> {
    let call: ToolCall = serde_json::from_str(&args.call).map_err(|e| Failure {
        message: format!("--call is not a tool call: {e}"),
        hint: r#"pass the call as JSON, such as --call '{"name":"list_issues","arguments":{"repo":"a/b"}}'"#.into(),
        code: 2,
    })?;
    let policy = match &args.rules {
        Some(path) => Policy::load(path)?,
        None => Policy::default(),
    };
    let guard = guard(&args.catalog, policy, args.autonomy)?;
    let evaluation = guard.evaluate(&call);
    let text = match args.format {
        CheckFormat::Json => {
            let mut text = serde_json::to_string_pretty(&evaluation).unwrap_or_default();
            text.push('\n');
            text
        }
        CheckFormat::Text => explain(&evaluation),
    };
    print(&text)
}

fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Failure {
            message: format!("cannot write the output: {e}"),
            hint: "check that standard output is open, or pass --out FILE".into(),
            code: 1,
        })
}

fn write_file(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|e| Failure {
        message: format!("cannot write {}: {e}", path.display()),
        hint: "check that the folder exists and is writable".into(),
        code: 1,
    })
}
