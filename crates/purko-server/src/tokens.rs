//! The operator and agent tokens: from the environment when set, otherwise generated once and
//! kept under the state folder with mode 0600, so the CLI on the same machine can find the
//! operator token and nobody else can read it.

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::auth::Tokens;

/// Where the tokens live when they were generated.
#[derive(Clone, Debug)]
pub struct TokenFiles {
    pub operator: PathBuf,
    pub agent: PathBuf,
    /// The files made just now (to be announced once).
    pub created: Vec<PathBuf>,
}

pub const OPERATOR_TOKEN_FILE: &str = "operator.token";
pub const AGENT_TOKEN_FILE: &str = "agent.token";

/// The tokens to serve with: each from the environment if given, else from its file under
/// `home`, made on first start.
pub fn load_or_create_tokens(
    home: &Path,
    operator: Option<String>,
    agent: Option<String>,
) -> std::io::Result<(Tokens, TokenFiles)> {
    fs::create_dir_all(home)?;
    let mut files = TokenFiles {
        operator: home.join(OPERATOR_TOKEN_FILE),
        agent: home.join(AGENT_TOKEN_FILE),
        created: Vec::new(),
    };
    let operator = match operator {
        Some(t) => t,
        None => token_file(&files.operator, &mut files.created)?,
    };
    let agent = match agent {
        Some(t) => t,
        None => token_file(&files.agent, &mut files.created)?,
    };
    if operator == agent {
        return Err(std::io::Error::other(
            "the operator token and the agent token are the same; an agent could then approve its own calls",
        ));
    }
    Ok((Tokens { operator, agent }, files))
}

fn token_file(path: &Path, created: &mut Vec<PathBuf>) -> std::io::Result<String> {
    match fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => return Ok(text.trim().to_owned()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    let token = bytes.iter().fold(String::with_capacity(48), |mut s, b| {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
        s
    });
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(token.as_bytes())?;
    file.write_all(b"\n")?;
    created.push(path.to_owned());
    Ok(token)
}
