//! The words inference knows: reading, writing and sending verbs in English and Portuguese, with
//! their inflected forms, and the small words that tell a verb from a noun.
//!
//! Lists are lemmas; the forms (`creates`, `created`, `creating`; `envia`, `enviando`,
//! `enviado`) are generated once. A lemma marked noun-prone (`commit`, `post`, `message`) is
//! only read as a verb where its position says so; the others are verbs wherever they stand.
//! Every list errs towards more writing and sending words: a missing write word could let a
//! write pass as a read, a missing read word only costs a question.

use std::sync::LazyLock;

use purko_protocol::Kind;
use rustc_hash::FxHashMap as HashMap;

/// The grammatical form a word was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `create`, `criar`, `cria`, `crie`: a verb wherever a verb can stand.
    Plain,
    /// `creates`, `posts`: a verb, or a plural noun.
    Third,
    /// `created`, `criado`: mostly an adjective ("the created issue").
    Participle,
    /// `creating`, `criando`.
    Gerund,
}

/// What a word means to inference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub kind: Kind,
    pub form: Form,
    /// Often a noun: only a verb where its position says so.
    pub noun_prone: bool,
    /// An English form (Portuguese verbs in the third person stand without a subject marker).
    pub english: bool,
}

#[rustfmt::skip]
const READ_EN: &[&str] = &[
    "get", "list", "read", "search", "find", "query", "describe", "show", "view", "count",
    "inspect", "lookup", "retrieve", "fetch", "return", "display", "browse", "explore", "diff",
    "compare", "preview", "check", "peek", "tail", "grep", "scan", "analyze", "analyse",
    "summarize", "summarise", "explain", "estimate", "calculate", "compute", "validate", "verify",
    "lint", "examine", "audit", "monitor", "obtain", "print", "echo", "see", "poll", "parse",
    "extract", "look", "traverse", "measure", "test", "translate", "convert", "format", "render",
    "match", "recommend", "suggest", "discover", "identify", "detect",
];
#[rustfmt::skip]
const READ_PT: &[&str] = &[
    "obter", "listar", "ler", "buscar", "procurar", "consultar", "mostrar", "ver", "contar",
    "pesquisar", "visualizar", "exibir", "verificar", "retornar", "localizar", "recuperar",
    "checar", "conferir", "calcular", "analisar", "acompanhar", "rastrear", "validar", "simular",
    "estimar", "resumir", "traduzir", "comparar", "encontrar", "inspecionar", "examinar",
    "monitorar", "identificar", "descrever",
];
/// Reading words that make a noun too ("a listagem", "o extrato").
#[rustfmt::skip]
const READ_NOUNS: &[&str] = &[
    "lookup", "listagem", "consulta", "extrato", "leitura", "busca", "pesquisa", "search",
    "status", "detalhes", "info", "details", "history", "historico", "saldo", "relatorio",
];

#[rustfmt::skip]
const WRITE_EN: &[&str] = &[
    "create", "add", "insert", "update", "edit", "modify", "change", "set", "put", "patch",
    "write", "overwrite", "rewrite", "save", "store", "delete", "remove", "destroy", "drop",
    "purge", "clear", "erase", "wipe", "truncate", "move", "rename", "copy", "duplicate",
    "download", "import", "export", "install", "uninstall", "upgrade", "downgrade", "deploy",
    "undeploy", "rollback", "roll", "resolve", "dispatch", "restart", "start", "stop", "run",
    "rerun", "execute", "exec", "eval", "evaluate", "kill", "terminate", "launch", "trigger",
    "cancel", "close", "reopen", "screenshot", "approve", "reject", "deny", "dismiss", "merge",
    "rebase", "cherry", "push", "pull", "commit", "revert", "reset", "checkout", "fork", "clone",
    "branch", "tag", "untag", "label", "unlabel", "assign", "unassign", "reassign", "lock",
    "unlock", "archive", "unarchive", "restore", "recover", "acknowledge", "ack", "snooze", "mute",
    "unmute", "pin", "unpin", "star", "unstar", "subscribe", "unsubscribe", "follow", "unfollow",
    "react", "vote", "upvote", "downvote", "rate", "block", "unblock", "ban", "unban", "kick",
    "scale", "cordon", "uncordon", "drain", "evict", "apply", "annotate", "replace", "sync",
    "synchronize", "refresh", "reload", "reboot", "shutdown", "power", "enable", "disable",
    "activate", "deactivate", "configure", "register", "unregister", "enroll", "schedule",
    "reschedule", "book", "reserve", "buy", "purchase", "pay", "charge", "refund", "transfer",
    "withdraw", "deposit", "submit", "confirm", "complete", "finish", "fill", "click", "press",
    "tap", "type", "select", "drag", "scroll", "resize", "focus", "upsert", "generate", "build",
    "compile", "make", "mark", "increment", "decrement", "toggle", "sign", "provision", "allocate",
    "release", "attach", "detach", "mount", "unmount", "link", "unlink", "connect", "disconnect",
    "join", "leave", "grant", "revoke", "invalidate", "expire", "rotate", "renew", "extend",
    "suspend", "resume", "pause", "unpause", "retry", "restart", "migrate", "seed", "backup",
    "mutate", "alter", "amend", "adjust", "fix", "transition", "order", "draft", "record", "log",
    "note", "comment", "bookmark", "favorite", "favourite", "hide", "unhide", "flag", "unflag",
    "report", "escalate", "process", "fulfill", "fulfil", "ship", "void", "capture", "authorize",
    "authorise", "invoke", "handoff", "queue", "enqueue", "dequeue", "claim", "unclaim", "reset",
    "rollout", "redeploy", "promote", "demote", "accept", "decline", "remind", "empty", "give",
    "adopt", "orphan", "expose", "tune", "train", "index", "reindex", "embed", "ingest", "learn",
    "memorize", "remember", "forget", "assert", "declare", "define", "establish", "initialize",
    "initialise", "init", "bootstrap", "setup", "teardown", "cleanup", "prune", "compact",
    "vacuum", "optimize", "encrypt", "decrypt", "zip", "unzip", "compress", "decompress", "split",
    "combine", "concatenate", "append", "prepend", "tweak", "stage", "unstage", "stash", "squash",
    "sudo", "chmod", "chown", "touch", "mkdir", "rm", "mv", "cp",
];
#[rustfmt::skip]
const WRITE_PT: &[&str] = &[
    "criar", "atualizar", "alterar", "modificar", "editar", "apagar", "excluir", "deletar",
    "remover", "escrever", "gravar", "salvar", "inserir", "adicionar", "incluir", "cadastrar",
    "registrar", "mover", "renomear", "copiar", "executar", "rodar", "iniciar", "parar",
    "reiniciar", "cancelar", "fechar", "abrir", "aprovar", "rejeitar", "recusar", "emitir",
    "gerar", "pagar", "transferir", "estornar", "reembolsar", "bloquear", "desbloquear", "ativar",
    "desativar", "definir", "configurar", "instalar", "desinstalar", "importar", "exportar",
    "agendar", "reagendar", "reservar", "arquivar", "desarquivar", "limpar", "substituir",
    "aplicar", "desfazer", "marcar", "desmarcar", "confirmar", "efetuar", "realizar", "processar",
    "baixar", "subir", "carregar", "implantar", "lancar", "debitar", "creditar", "cobrar",
    "faturar", "comprar", "vender", "assinar", "cancelar", "suspender", "retomar", "pausar",
    "liberar", "autorizar", "solicitar", "abrir", "finalizar", "concluir", "encerrar", "preencher",
    "clicar", "digitar", "selecionar", "vincular", "desvincular", "associar", "desassociar",
    "atribuir", "ajustar", "corrigir", "restaurar", "recriar", "sincronizar", "migrar",
    "provisionar", "alocar", "desalocar", "habilitar", "desabilitar", "renovar", "prorrogar",
    "estender", "trocar", "mudar", "substituir", "zerar", "resetar", "bloquear", "inativar",
    "reativar", "expirar", "revogar", "conceder", "gerenciar", "manter", "atender", "registar",
    "lancar", "parcelar", "quitar", "liquidar", "transferir", "depositar", "sacar", "aportar",
    "resgatar", "investir", "emprestar", "trocar", "agendar", "marcar", "desmarcar", "reservar",
    "alugar", "contratar", "demitir", "admitir", "matricular", "inscrever", "desinscrever",
    "aceitar", "recusar", "votar",
];

#[rustfmt::skip]
const SEND_EN: &[&str] = &[
    "send", "email", "mail", "notify", "publish", "post", "message", "share", "forward", "reply",
    "respond", "invite", "broadcast", "tweet", "dm", "sms", "dial", "transmit", "deliver", "relay",
    "upload", "announce", "alert", "ping", "retweet", "repost", "crosspost",
];
#[rustfmt::skip]
const SEND_PT: &[&str] = &[
    "enviar", "mandar", "notificar", "publicar", "compartilhar", "encaminhar", "responder",
    "convidar", "disparar", "transmitir", "avisar", "comunicar", "postar", "divulgar", "remeter",
    "telefonar", "repassar", "reenviar", "partilhar", "anunciar", "alertar",
];

/// English lemmas that are as often nouns as verbs.
#[rustfmt::skip]
const NOUN_PRONE_EN: &[&str] = &[
    "commit", "post", "message", "mail", "email", "change", "order", "record", "comment", "label",
    "tag", "review", "reply", "share", "merge", "push", "pull", "release", "draft", "schedule",
    "book", "log", "note", "report", "set", "test", "check", "watch", "star", "fork", "branch",
    "link", "bookmark", "pin", "lock", "block", "flag", "mark", "sign", "return", "update",
    "patch", "page", "alert", "type", "reset", "broadcast", "download", "match", "process",
    "capture", "issue", "text", "chat", "index", "format", "stage", "tail", "rate", "vote",
    "drain", "drop", "run", "power", "seed", "backup", "void", "queue", "claim", "accept",
    "favorite", "favourite", "fill", "select", "focus", "scroll", "copy", "trigger", "transfer",
    "deposit", "charge", "refund", "contact", "webhook", "dm", "sms", "tweet", "ping", "split",
    "view", "display", "search", "query", "list", "count", "print", "echo", "export", "import",
    "install", "upload", "upgrade", "deploy", "rollback", "roll", "restart", "start", "stop",
    "clone", "archive", "open", "complete", "clear", "empty", "close", "restore", "refresh",
    "reload", "move", "mount", "connect", "leave", "note", "define", "remind", "ship", "stash",
    "touch", "answer", "alter", "fix", "lint", "audit", "estimate", "design", "rollout", "cleanup",
    "setup", "teardown", "compact", "estimate",
];
/// Portuguese third-person forms that are also common nouns ("a reserva", "a marca").
#[rustfmt::skip]
const NOUN_PRONE_PT_FORMS: &[&str] = &[
    "reserva", "reservas", "marca", "marcas", "copia", "copias", "troca", "trocas", "lista",
    "listas", "conta", "contas", "busca", "buscas", "consulta", "consultas", "pesquisa",
    "pesquisas", "cobranca", "venda", "vendas", "compra", "compras", "assinatura", "entrega",
    "pago", "carga", "cargas", "baixa", "baixas", "limpa", "aviso", "avisos", "envio", "envios",
    "resposta", "respostas", "fecha", "abre", "gera", "subida", "muda", "mudas", "ajuste",
    "ajustes", "registro", "registros", "cadastro", "cadastros", "pedido", "pedidos", "emissao",
    "publicacao", "alerta", "alertas", "convite", "convites", "resgate", "resgates", "deposito",
    "depositos", "saque", "saques", "aporte", "aportes", "devolucao", "troco", "inscricao",
    "matricula", "matriculas", "voto", "votos", "avaliacao", "ajuda", "parada", "paradas",
    "cancelamento", "transferencia", "pagamento", "pagamentos", "aprovacao", "recusa",
];

/// Surface forms never read as verbs: prepositions and names they collide with.
#[rustfmt::skip]
const NOT_VERBS: &[&str] = &[
    "para", "param", "params", "pare", "e", "a", "o", "as", "os", "em", "de", "da", "do", "se",
    "ser", "sera", "dado", "dados", "data", "conte", "contato", "mode", "model", "use", "used",
    "user", "users", "ate", "cada", "sobre", "pode", "reading", "readings", "listing", "listings",
    "finding", "findings", "setting", "settings", "building", "buildings", "meeting", "meetings",
    "heading", "headings", "mapping", "mappings", "string", "strings", "thing", "things", "spring",
    "padding", "pricing", "billing", "routing", "logging", "running", "pending", "existing",
    "remaining", "matching", "following", "missing", "incoming", "outgoing", "upcoming", "ongoing",
    "booking", "bookings", "ordering", "holding", "holdings", "starting", "closing",
    "drawing", "warning", "warnings", "morning", "evening", "embedding", "embeddings", "encoding",
    "rating", "ratings", "recording", "recordings", "messaging", "shipping",
    "tracking", "offering", "offerings", "binding", "bindings", "landing", "nothing", "anything",
    "something", "everything", "dating", "paging", "checking",
];

/// Words before which a noun-prone word is a noun: articles, possessives, prepositions.
#[rustfmt::skip]
pub const NOUN_MARKERS: &[&str] = &[
    "the", "a", "an", "this", "that", "these", "those", "its", "their", "your", "my", "our", "his",
    "her", "all", "any", "each", "every", "some", "of", "for", "from", "with", "about", "by", "on",
    "in", "at", "into", "per", "via", "recent", "latest", "last", "new", "pending", "existing",
    "previous", "current", "own", "such", "other", "specific", "given", "single", "multiple",
    "many", "several", "first", "next", "o", "os", "as", "um", "uma", "uns", "umas", "do", "da",
    "dos", "das", "de", "no", "na", "nos", "nas", "pelo", "pela", "pelos", "pelas", "com", "seu",
    "sua", "seus", "suas", "este", "esta", "esse", "essa", "cada", "todo", "toda", "todos",
    "todas", "ultimo", "ultima", "novo", "nova", "whose", "git", "pr", "dry", "test", "unit",
    "api", "http", "rest", "mcp",
];

/// Words after which a noun-prone word is a verb: "to post", "and update", "it sends".
#[rustfmt::skip]
pub const VERB_MARKERS: &[&str] = &[
    "to", "and", "or", "then", "also", "it", "that", "which", "will", "can", "may", "must",
    "should", "could", "would", "shall", "please", "e", "ou", "que", "depois", "entao", "tambem",
    "vai", "pode", "podem", "deve", "devem", "then", "automatically", "immediately", "permanently",
    "directly", "optionally", "atomically", "safely", "first", "finally",
];

/// Words that negate the verbs closely after them: "without modifying", "não altera".
#[rustfmt::skip]
pub const NEGATIONS: &[&str] = &[
    "not", "no", "never", "without", "dont", "doesnt", "cannot", "cant", "wont", "isnt", "arent",
    "didnt", "nor", "neither", "none", "non", "nao", "nunca", "sem", "nem", "jamais", "nenhum",
    "nenhuma", "nothing",
];

/// Words that end a negation's reach: "does not wait, but deletes".
#[rustfmt::skip]
pub const NEGATION_STOPS: &[&str] = &["but", "however", "instead", "mas", "porem", "entretanto"];

/// Words before a participle that make it a verb: "is deleted", "será enviado".
#[rustfmt::skip]
pub const AUXILIARIES: &[&str] = &[
    "is", "are", "was", "were", "be", "been", "being", "get", "gets", "got", "will", "gets",
    "becomes", "e", "sao", "foi", "foram", "sera", "serao", "seja", "sejam", "fica", "ficam",
    "sendo", "has", "have", "had",
];

/// Lead-in words of a description that come before its main verb: "Use this tool to list ...".
#[rustfmt::skip]
pub const LEAD_INS: &[&str] = &[
    "this", "tool", "use", "used", "to", "allows", "allow", "lets", "let", "you", "a", "an", "the",
    "that", "will", "can", "helps", "help", "function", "endpoint", "operation", "api", "mcp",
    "please", "simply", "quickly", "easily", "permite", "ferramenta", "esta", "essa", "usada",
    "usado", "para", "que", "serve", "funcao", "utilize", "voce", "pode", "it", "method", "action",
    "command", "we", "i", "just", "only", "tries", "attempts", "try", "utility", "and", "e",
    "somente", "apenas",
];

/// Two-word phrases read as one word, or as no verb at all (`None`).
#[rustfmt::skip]
pub const PHRASES: &[(&str, &str, Option<Kind>)] = &[
    ("look", "up", Some(Kind::Read)),
    ("looks", "up", Some(Kind::Read)),
    ("read", "only", Some(Kind::Read)),
    ("somente", "leitura", Some(Kind::Read)),
    ("apenas", "leitura", Some(Kind::Read)),
    ("check", "out", Some(Kind::Write)),
    ("checks", "out", Some(Kind::Write)),
    ("set", "up", Some(Kind::Write)),
    ("sets", "up", Some(Kind::Write)),
    ("sign", "up", Some(Kind::Write)),
    ("sign", "in", Some(Kind::Write)),
    ("log", "in", Some(Kind::Write)),
    ("log", "out", Some(Kind::Write)),
    ("pull", "request", None),
    ("pull", "requests", None),
    ("merge", "request", None),
    ("merge", "requests", None),
    ("dry", "run", None),
    ("e", "mail", None),
];

/// English lemmas whose last consonant doubles: `stop` → `stopped`, `stopping`.
#[rustfmt::skip]
const DOUBLING: &[&str] = &[
    "stop", "submit", "commit", "drop", "ban", "unban", "pin", "unpin", "star", "unstar", "tag",
    "untag", "set", "put", "run", "rerun", "cancel", "label", "unlabel", "ship", "zip", "unzip",
    "chat", "dm", "cc", "tap", "plan", "snap", "wrap", "unwrap", "map", "scan", "dial", "forget",
    "admit", "emit", "permit", "transmit", "control", "patrol", "rebut", "flag", "unflag", "drag",
    "hug", "skip", "step", "swap", "trim", "strip",
];

/// Irregular English forms: (lemma, forms).
#[rustfmt::skip]
const IRREGULAR_EN: &[(&str, &[&str])] = &[
    ("send", &["sent"]),
    ("write", &["wrote", "written"]),
    ("overwrite", &["overwrote", "overwritten"]),
    ("rewrite", &["rewrote", "rewritten"]),
    ("run", &["ran"]),
    ("rerun", &["reran"]),
    ("get", &["got", "gotten"]),
    ("find", &["found"]),
    ("show", &["shown"]),
    ("build", &["built"]),
    ("make", &["made"]),
    ("give", &["gave"]),
    ("withdraw", &["withdrew", "withdrawn"]),
    ("forget", &["forgot", "forgotten"]),
    ("see", &["saw", "seen"]),
    ("broadcast", &["broadcasted"]),
    ("pay", &["paid"]),
    ("buy", &["bought"]),
    ("undo", &["undid", "undone"]),
    ("redo", &["redid", "redone"]),
    ("do", &["does", "did", "done"]),
];

/// Irregular Portuguese forms: (infinitive, forms).
#[rustfmt::skip]
const IRREGULAR_PT: &[(&str, &[&str])] = &[
    (
        "ler",
        &[
            "le", "leem", "lendo", "lido", "lida", "lidos", "lidas", "leia", "leiam",
        ],
    ),
    (
        "ver",
        &[
            "ve", "veem", "vendo", "visto", "vista", "vistos", "vistas", "veja", "vejam",
        ],
    ),
    (
        "obter",
        &[
            "obtem", "obtendo", "obtido", "obtida", "obtidos", "obtidas", "obtenha",
        ],
    ),
    (
        "desfazer",
        &[
            "desfaz",
            "desfazem",
            "desfazendo",
            "desfeito",
            "desfeita",
            "desfaca",
        ],
    ),
    (
        "manter",
        &["mantem", "mantendo", "mantido", "mantida", "mantenha"],
    ),
    ("subir", &["sobe", "sobem"]),
    ("pedir", &["pede", "pedem", "pedindo", "peca"]),
    ("fazer", &[]),
];

pub(crate) static LEXICON: LazyLock<HashMap<String, Entry>> = LazyLock::new(build);

/// Looks up a folded word.
pub fn lookup(word: &str) -> Option<Entry> {
    LEXICON.get(word).copied()
}

/// Whether a folded word is in a list (lists are short; a linear scan beats hashing).
pub fn is_in(list: &[&str], word: &str) -> bool {
    list.contains(&word)
}

fn build() -> HashMap<String, Entry> {
    let mut map = HashMap::with_capacity_and_hasher(8192, rustc_hash::FxBuildHasher);
    // Later lists win over earlier ones for a form they share: send over write over read,
    // so that a shared form always reads as the stricter kind.
    for (lemmas, kind) in [
        (READ_EN, Kind::Read),
        (WRITE_EN, Kind::Write),
        (SEND_EN, Kind::SendsOut),
    ] {
        for lemma in lemmas.iter().filter(|l| !l.ends_with('_')) {
            let noun_prone = NOUN_PRONE_EN.contains(lemma);
            for (form, shape) in english_forms(lemma) {
                insert(
                    &mut map,
                    form,
                    Entry {
                        kind,
                        form: shape,
                        noun_prone,
                        english: true,
                    },
                );
            }
        }
    }
    for (lemmas, kind) in [
        (READ_PT, Kind::Read),
        (WRITE_PT, Kind::Write),
        (SEND_PT, Kind::SendsOut),
    ] {
        for lemma in lemmas.iter().filter(|l| !l.ends_with('_')) {
            for (form, shape) in portuguese_forms(lemma) {
                let noun_prone = NOUN_PRONE_PT_FORMS.contains(&form.as_str());
                insert(
                    &mut map,
                    form,
                    Entry {
                        kind,
                        form: shape,
                        noun_prone,
                        english: false,
                    },
                );
            }
        }
    }
    for noun in READ_NOUNS {
        map.entry((*noun).to_owned()).or_insert(Entry {
            kind: Kind::Read,
            form: Form::Plain,
            noun_prone: true,
            english: true,
        });
    }
    map
}

fn insert(map: &mut HashMap<String, Entry>, form: String, entry: Entry) {
    if NOT_VERBS.contains(&form.as_str()) || form.len() < 2 {
        return;
    }
    match map.get(&form) {
        // A stricter kind never gives way to a more lenient one.
        Some(existing) if existing.kind > entry.kind => {}
        _ => {
            map.insert(form, entry);
        }
    }
}

fn english_forms(lemma: &str) -> Vec<(String, Form)> {
    let mut forms = vec![(lemma.to_owned(), Form::Plain)];
    let bytes = lemma.as_bytes();
    let last = bytes[bytes.len() - 1];
    let before_last = bytes.len().checked_sub(2).map(|i| bytes[i]);
    let vowel = |b: u8| b"aeiou".contains(&b);
    let third =
        if lemma.ends_with(['s', 'x', 'z']) || lemma.ends_with("ch") || lemma.ends_with("sh") {
            format!("{lemma}es")
        } else if last == b'y' && before_last.is_some_and(|b| !vowel(b)) {
            format!("{}ies", &lemma[..lemma.len() - 1])
        } else if last == b'o' && before_last.is_some_and(|b| !vowel(b)) {
            format!("{lemma}es")
        } else {
            format!("{lemma}s")
        };
    forms.push((third, Form::Third));
    let doubles = DOUBLING.contains(&lemma);
    let doubled = format!("{lemma}{}", last as char);
    let past = if last == b'e' {
        format!("{lemma}d")
    } else if last == b'y' && before_last.is_some_and(|b| !vowel(b)) {
        format!("{}ied", &lemma[..lemma.len() - 1])
    } else if doubles {
        format!("{doubled}ed")
    } else {
        format!("{lemma}ed")
    };
    forms.push((past, Form::Participle));
    if doubles && lemma.ends_with('l') {
        forms.push((format!("{lemma}ed"), Form::Participle));
        forms.push((format!("{lemma}ing"), Form::Gerund));
    }
    let gerund = if lemma.ends_with("ie") {
        format!("{}ying", lemma.strip_suffix("ie").unwrap_or(lemma))
    } else if last == b'e'
        && !lemma.ends_with("ee")
        && !lemma.ends_with("ye")
        && !lemma.ends_with("oe")
    {
        format!("{}ing", &lemma[..lemma.len() - 1])
    } else if doubles {
        format!("{doubled}ing")
    } else {
        format!("{lemma}ing")
    };
    forms.push((gerund, Form::Gerund));
    if let Some((_, irregular)) = IRREGULAR_EN.iter().find(|(l, _)| *l == lemma) {
        for form in irregular.iter().filter(|f| !f.ends_with('_')) {
            forms.push(((*form).to_owned(), Form::Participle));
        }
    }
    forms
}

fn portuguese_forms(infinitive: &str) -> Vec<(String, Form)> {
    if let Some((_, irregular)) = IRREGULAR_PT.iter().find(|(l, _)| *l == infinitive) {
        let mut forms = vec![(infinitive.to_owned(), Form::Plain)];
        for form in *irregular {
            let shape = if form.ends_with("ndo") {
                Form::Gerund
            } else if form.ends_with("ido") || form.ends_with("ida") || form.ends_with("ito") {
                Form::Participle
            } else {
                Form::Plain
            };
            forms.push(((*form).to_owned(), shape));
        }
        return forms;
    }
    let (stem, ending) = infinitive.split_at(infinitive.len() - 2);
    let mut forms = vec![(infinitive.to_owned(), Form::Plain)];
    let mut add = |suffix: &str, shape| forms.push((format!("{stem}{suffix}"), shape));
    match ending {
        "ar" => {
            for s in ["a", "am", "ou"] {
                add(s, Form::Plain);
            }
            add("ando", Form::Gerund);
            for s in ["ado", "ada", "ados", "adas"] {
                add(s, Form::Participle);
            }
            // Subjunctive and polite imperative: envie, busque, apague, lance.
            let soft = if let Some(s) = stem.strip_suffix('c') {
                format!("{s}qu")
            } else if let Some(s) = stem.strip_suffix('g') {
                format!("{s}gu")
            } else {
                stem.to_owned()
            };
            forms.push((format!("{soft}e"), Form::Plain));
            forms.push((format!("{soft}em"), Form::Plain));
        }
        "er" | "ir" => {
            let vowel = if ending == "er" { 'e' } else { 'i' };
            let third = if stem.ends_with('u') { "i" } else { "e" };
            add(third, Form::Plain);
            add("em", Form::Plain);
            add(&format!("{vowel}ndo"), Form::Gerund);
            for s in ["ido", "ida", "idos", "idas"] {
                add(s, Form::Participle);
            }
            let soft = if let Some(s) = stem.strip_suffix('g') {
                format!("{s}j")
            } else {
                stem.to_owned()
            };
            forms.push((format!("{soft}a"), Form::Plain));
            forms.push((format!("{soft}am"), Form::Plain));
        }
        _ => {}
    }
    forms
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn kind_of(word: &str) -> Option<Kind> {
        lookup(word).map(|e| e.kind)
    }

    #[test]
    fn english_forms_are_generated() {
        for (word, kind) in [
            ("creates", Kind::Write),
            ("created", Kind::Write),
            ("creating", Kind::Write),
            ("stopped", Kind::Write),
            ("deploys", Kind::Write),
            ("copies", Kind::Write),
            ("pushes", Kind::Write),
            ("sent", Kind::SendsOut),
            ("notifies", Kind::SendsOut),
            ("lists", Kind::Read),
            ("retrieving", Kind::Read),
            ("cancelled", Kind::Write),
            ("canceled", Kind::Write),
        ] {
            assert_eq!(kind_of(word), Some(kind), "{word}");
        }
    }

    #[test]
    fn portuguese_forms_are_generated() {
        for (word, kind) in [
            ("envia", Kind::SendsOut),
            ("envie", Kind::SendsOut),
            ("enviando", Kind::SendsOut),
            ("lista", Kind::Read),
            ("busque", Kind::Read),
            ("exclui", Kind::Write),
            ("excluido", Kind::Write),
            ("altera", Kind::Write),
            ("obtem", Kind::Read),
            ("le", Kind::Read),
            ("emite", Kind::Write),
        ] {
            assert_eq!(kind_of(word), Some(kind), "{word}");
        }
    }

    #[test]
    fn prepositions_are_never_verbs() {
        for word in ["para", "param", "e", "a", "data", "settings", "running"] {
            assert_eq!(kind_of(word), None, "{word}");
        }
    }

    #[test]
    fn a_form_shared_by_two_kinds_takes_the_stricter() {
        // "remove" is English and Portuguese; "post" reads as a sending verb.
        assert_eq!(kind_of("remove"), Some(Kind::Write));
        assert_eq!(kind_of("posts"), Some(Kind::SendsOut));
    }
}
