//! `purko kinds draft` and `purko check`: the guardrail core on files, no server needed.

use std::io::Write;
use std::path::Path;

use purko_guard::{
    Catalogue, Guard, GuardConfig, Inference, KindsFile, Policy, draft_tools_file, explain,
};
use purko_protocol::{Autonomy, ToolCall};

use crate::{Catalog, CheckArgs, CheckFormat, DraftArgs, DraftFormat, Failure};

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

pub fn draft(args: &DraftArgs) -> Result<(), Failure> {
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

pub fn check(args: &CheckArgs) -> Result<(), Failure> {
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

pub fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Failure {
            message: format!("cannot write the output: {e}"),
            hint: "check that standard output is open, or pass --out FILE".into(),
            code: 1,
        })
}

pub fn write_file(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|e| Failure {
        message: format!("cannot write {}: {e}", path.display()),
        hint: "check that the folder exists and is writable".into(),
        code: 1,
    })
}
