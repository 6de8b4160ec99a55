//! Inference of a tool's kind from what its definition says (DESIGN.md section 3, step 3).
//!
//! The invariant: a tool comes out `read` only when something says it reads (a reading verb
//! leading its name or description, `readOnlyHint: true`, HTTP `GET`) and nothing counted says
//! otherwise: no writing or sending verb anywhere, no destination argument, no annotation or
//! HTTP method saying it changes something. A verb under negation ("without modifying") or
//! inside another tool's name ("call `update_issue` afterwards") is kept as evidence but does
//! not count; a destination argument always counts.

use std::borrow::Cow;

use purko_protocol::{Classification, Kind, KindSource, Signal, SignalPlace, ToolSpec};

use crate::destination::{Because, DestinationMap};
use crate::lexicon::{
    self, AUXILIARIES, Entry, Form, LEAD_INS, NEGATION_STOPS, NEGATIONS, NOUN_MARKERS, PHRASES,
    VERB_MARKERS, is_in,
};
use crate::words::{Piece, short, split_identifier, split_prose, squeeze};

/// The most signals kept as evidence for one tool; a long description repeats itself.
const MAX_SIGNALS: usize = 40;
/// How many words after a negation it reaches.
const NEGATION_REACH: u8 = 3;
const CONJUNCTIONS: &[&str] = &["and", "or", "then", "e", "ou", "depois"];
/// Words after which a noun-prone word stands as a verb of the tool itself: "this tool posts".
const SUBJECTS: &[&str] = &[
    "tool",
    "function",
    "endpoint",
    "ferramenta",
    "funcao",
    "it",
    "which",
];

/// Infers a tool's kind. `destinations` is what the tool's schema declares.
pub fn infer(tool: &ToolSpec, destinations: &DestinationMap) -> Classification {
    let mut signals = Signals::default();
    read_name(&tool.name, &mut signals);
    read_description(&tool.description, &tool.name, &mut signals);
    for destination in destinations.declared_destinations() {
        let (place, text) = match destination.because {
            Because::Name(word) => (SignalPlace::ArgumentName(destination.path), word),
            Because::Format(format) => (SignalPlace::ArgumentFormat(destination.path), format),
            Because::Described(phrase) => (SignalPlace::ArgumentName(destination.path), phrase),
        };
        signals.push(Kind::SendsOut, place, text, None);
    }
    if let Some(method) = tool.http_method.as_deref() {
        let method = method.trim().to_ascii_uppercase();
        let kind = if matches!(method.as_str(), "GET" | "HEAD" | "OPTIONS") {
            Kind::Read
        } else {
            Kind::Write
        };
        signals.push(kind, SignalPlace::HttpMethod, method, None);
    }
    if let Some(annotations) = &tool.annotations {
        match annotations.read_only_hint {
            Some(true) => signals.push(
                Kind::Read,
                SignalPlace::Annotation,
                "readOnlyHint: true".into(),
                None,
            ),
            Some(false) => signals.push(
                Kind::Write,
                SignalPlace::Annotation,
                "readOnlyHint: false".into(),
                None,
            ),
            None => {}
        }
        if annotations.destructive_hint == Some(true) {
            signals.push(
                Kind::Write,
                SignalPlace::Annotation,
                "destructiveHint: true".into(),
                None,
            );
        }
    }
    decide(signals.list)
}

#[derive(Default)]
struct Signals {
    list: Vec<Signal>,
}

impl Signals {
    fn push(&mut self, kind: Kind, place: SignalPlace, text: String, ignored: Option<String>) {
        let seen = self.list.iter().any(|s| {
            s.points_to == kind
                && s.place == place
                && s.text.eq_ignore_ascii_case(&text)
                && s.ignored == ignored
        });
        // Counted signals always fit; ignored ones only while there is room.
        if !seen && (self.list.len() < MAX_SIGNALS || ignored.is_none()) {
            self.list.push(Signal {
                points_to: kind,
                place,
                text,
                ignored,
            });
        }
    }
}

/// A word of a name or a phrase, after two-word phrases are joined.
struct Hit<'w> {
    text: &'w str,
    entry: Entry,
}

/// A two-word phrase: a verb of some kind, or words that are no verb at all.
#[derive(Clone, Copy)]
enum Phrase {
    Verb(Kind),
    NoVerb,
}

fn phrase(first: &str, second: Option<&str>) -> Option<Phrase> {
    let second = second?;
    PHRASES
        .iter()
        .find(|(a, b, _)| *a == first && *b == second)
        .map(|(_, _, kind)| kind.map_or(Phrase::NoVerb, Phrase::Verb))
}

/// Nouns for what reaches people: writing or changing one of them delivers it.
const MESSAGES: &[&str] = &[
    "message",
    "messages",
    "mensagem",
    "mensagens",
    "sms",
    "dm",
    "dms",
    "tweet",
    "tweets",
];
/// Verbs that change a thing's content.
const CHANGES: &[&str] = &[
    "edit",
    "update",
    "modify",
    "rewrite",
    "change",
    "compose",
    "add",
    "create",
    "editar",
    "atualizar",
    "alterar",
    "adicionar",
    "criar",
];

fn read_name(name: &str, signals: &mut Signals) {
    let words = split_identifier(name);
    // (position, hit) of every verb candidate; phrases count as one plain, clear verb.
    let mut hits: Vec<(usize, Hit<'_>)> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if let Some(found) = phrase(&words[i], words.get(i + 1).map(AsRef::as_ref)) {
            if let Phrase::Verb(kind) = found {
                let entry = Entry {
                    kind,
                    form: Form::Plain,
                    noun_prone: false,
                    english: true,
                };
                hits.push((
                    i,
                    Hit {
                        text: &words[i],
                        entry,
                    },
                ));
            }
            i += 2;
            continue;
        }
        if let Some(entry) = lexicon::lookup(&words[i]) {
            // A participle in a name describes a thing: `list_deleted_items`.
            if entry.form != Form::Participle {
                hits.push((
                    i,
                    Hit {
                        text: &words[i],
                        entry,
                    },
                ));
            }
        }
        i += 1;
    }
    let clear_verb = hits
        .iter()
        .any(|(_, h)| !h.entry.noun_prone || h.entry.kind == Kind::Read);
    let mut first_noun_prone = true;
    let mut counted: Vec<usize> = Vec::new();
    for (at, hit) in &hits {
        // A reading word counts wherever it stands: it only ever agrees with the rest.
        let counts = if hit.entry.kind == Kind::Read {
            first_noun_prone = false;
            true
        } else if hit.entry.noun_prone && hit.entry.form == Form::Third {
            // "orders", "posts", "logs": a plural in a name is a thing.
            false
        } else if hit.entry.noun_prone {
            // "create_or_update": a noun-prone word joined to a verb is a verb too.
            let coordinated = at.checked_sub(2).is_some_and(|before| {
                is_in(CONJUNCTIONS, &words[before + 1]) && counted.contains(&before)
            });
            // "pods_log", "git_branch": a last word after a noun names the thing.
            let head_noun = *at > 0 && *at == words.len() - 1;
            let stands_alone = !clear_verb && first_noun_prone && (*at == 0 || !head_noun);
            first_noun_prone = false;
            coordinated || stands_alone
        } else {
            true
        };
        if counts {
            counted.push(*at);
            let text = if hit.text == "look" {
                "look up".to_owned()
            } else {
                hit.text.to_owned()
            };
            signals.push(hit.entry.kind, SignalPlace::Name, text, None);
        }
    }
    // "edit_message", "add_message": writing a message into a conversation delivers it.
    if let Some(&at) = counted.iter().find(|&&at| is_in(CHANGES, &words[at]))
        && let Some(noun) = words[at + 1..].iter().find(|w| is_in(MESSAGES, w))
    {
        signals.push(
            Kind::SendsOut,
            SignalPlace::Name,
            format!("{} {noun}", words[at]),
            None,
        );
    }
    unknown_first_action(&words, &hits, signals);
}

/// `reboot_and_get_status`: the reading verb is only part of it, and the first action is a word
/// inference does not know. That unknown action counts as a write.
fn unknown_first_action(words: &[Cow<'_, str>], hits: &[(usize, Hit<'_>)], signals: &mut Signals) {
    let Some(conjunction) = words.iter().position(|w| is_in(CONJUNCTIONS, w)) else {
        return;
    };
    if conjunction == 0 || hits.iter().any(|(at, _)| *at < conjunction) {
        return;
    }
    if hits
        .iter()
        .any(|(at, h)| *at > conjunction && h.entry.kind == Kind::Read)
    {
        let action = words[..conjunction].join("_");
        signals.push(Kind::Write, SignalPlace::Name, action, None);
    }
}

/// Words that open the object of a verb: "restore the latest", "o cancela".
const OBJECTS: &[&str] = &[
    "the", "a", "an", "it", "them", "all", "its", "this", "these", "those", "each", "every", "any",
    "one", "your", "their", "our", "my", "his", "her", "o", "os", "as", "um", "uma", "seu", "sua",
    "seus", "suas", "esse", "essa", "este", "esta", "lhe", "todos", "todas",
];

/// Words that open a part of a sentence about something else than what this tool does:
/// "to resend one, use `enviar_boleto`", "if you want to edit, call `edit_file`".
const ASIDES: &[&str] = &[
    "to", "para", "pra", "if", "se", "when", "quando", "for", "instead", "caso", "call", "use",
    "see", "try", "prefer", "chame", "veja", "prefira",
];

/// A write or send signal of the description waiting for the end of its part of a sentence.
struct Pending {
    kind: Kind,
    text: String,
    ignored: Option<String>,
    /// The first verb of its part: what the part says the tool does.
    leads: bool,
}

/// Where the description reader stands.
struct Reader<'s> {
    own_name: String,
    signals: &'s mut Signals,
    /// The last two words of this clause (empty at its start), and whether each stood as a
    /// verb. The buffers are reused from word to word.
    prev: String,
    prev2: String,
    prev_verb: bool,
    prev2_verb: bool,
    negation: Option<(String, u8)>,
    sentence: usize,
    /// Still before the main verb of the sentence (lead-ins such as "Use this tool to").
    leading: bool,
    /// The first sentence held no verb at all (a title): the second one may lead.
    lead_open: bool,
    /// This part of the sentence: its signals, the other tool it names, how it opens.
    part: Vec<Pending>,
    part_names: Option<String>,
    part_aside: Option<bool>,
    /// The word being read opens its part.
    first_word: bool,
    /// Some word of this part stood as a verb: "Get the file and modify it".
    part_had_verb: bool,
    /// The word after the one being read, folded; empty at a boundary.
    next: String,
}

fn read_description(description: &str, name: &str, signals: &mut Signals) {
    let mut reader = Reader {
        own_name: squeeze(name),
        signals,
        prev: String::new(),
        prev2: String::new(),
        prev_verb: false,
        prev2_verb: false,
        negation: None,
        sentence: 0,
        leading: true,
        lead_open: true,
        part: Vec::new(),
        part_names: None,
        part_aside: None,
        first_word: true,
        part_had_verb: false,
        next: String::new(),
    };
    let mut pieces = split_prose(description).peekable();
    while let Some(piece) = pieces.next() {
        match piece {
            Piece::Comma => {
                reader.negation = None;
                reader.step(",", false);
            }
            Piece::ClauseEnd => reader.end_part(),
            Piece::SentenceEnd => {
                reader.end_part();
                reader.sentence += 1;
                reader.leading = true;
            }
            Piece::Identifier { text } => reader.identifier(text),
            Piece::Quoted { text } => reader.quoted(text),
            Piece::Word { text, folded } => {
                let next = match pieces.peek() {
                    Some(Piece::Word { folded, .. }) => Some(folded.as_ref()),
                    _ => None,
                };
                if let Some(found) = phrase(&folded, next) {
                    let joined = format!("{text} {}", next.unwrap_or_default());
                    pieces.next();
                    let stood = match found {
                        Phrase::Verb(kind) => {
                            let entry = Entry {
                                kind,
                                form: Form::Plain,
                                noun_prone: false,
                                english: true,
                            };
                            reader.verb(&joined, entry)
                        }
                        Phrase::NoVerb => false,
                    };
                    reader.step(&folded, stood);
                    continue;
                }
                reader.next.clear();
                reader.next.push_str(next.unwrap_or_default());
                reader.word(text, &folded);
            }
        }
    }
    reader.end_part();
}

impl Reader<'_> {
    fn end_part(&mut self) {
        let names = self.part_names.take();
        let aside = self.part_aside.take().unwrap_or(false);
        for pending in self.part.drain(..) {
            let ignored = pending.ignored.or_else(|| {
                names
                    .as_ref()
                    .filter(|_| aside || !pending.leads)
                    .map(|other| format!("said of another tool '{other}'"))
            });
            self.signals.push(
                pending.kind,
                SignalPlace::Description,
                pending.text,
                ignored,
            );
        }
        self.prev.clear();
        self.prev2.clear();
        self.prev_verb = false;
        self.prev2_verb = false;
        self.negation = None;
        self.part_had_verb = false;
    }

    fn step(&mut self, folded: &str, stood_as_verb: bool) {
        std::mem::swap(&mut self.prev, &mut self.prev2);
        self.prev.clear();
        self.prev.push_str(folded);
        self.prev2_verb = self.prev_verb;
        self.prev_verb = stood_as_verb;
    }

    fn opens_part(&mut self, folded: &str) {
        self.first_word = self.part_aside.is_none();
        if self.part_aside.is_none() {
            self.part_aside = Some(is_in(ASIDES, folded));
        }
    }

    fn identifier(&mut self, text: &str) {
        self.opens_part("");
        if squeeze(text) != self.own_name {
            for word in split_identifier(text) {
                if let Some(entry) = lexicon::lookup(&word)
                    && entry.kind != Kind::Read
                    && entry.form != Form::Participle
                {
                    let why = format!("names another tool '{text}'");
                    self.signals.push(
                        entry.kind,
                        SignalPlace::Description,
                        word.into_owned(),
                        Some(why),
                    );
                }
            }
            self.part_names
                .get_or_insert_with(|| short(text).into_owned());
        }
        self.leading = false;
        self.step("it", false);
    }

    fn quoted(&mut self, text: &str) {
        self.opens_part("");
        for piece in split_prose(text) {
            if let Piece::Word { folded, .. } = piece
                && let Some(entry) = lexicon::lookup(&folded)
                && entry.kind != Kind::Read
                && entry.form != Form::Participle
            {
                let why = "in quotes, an example rather than what the tool does".to_owned();
                self.signals.push(
                    entry.kind,
                    SignalPlace::Description,
                    folded.into_owned(),
                    Some(why),
                );
            }
        }
        self.step("\"", false);
    }

    fn word(&mut self, text: &str, folded: &str) {
        self.opens_part(folded);
        if is_in(NEGATIONS, folded) {
            self.negation = Some((text.to_owned(), NEGATION_REACH + 1));
        } else if is_in(NEGATION_STOPS, folded) {
            self.negation = None;
        }
        let mut stood = false;
        if let Some(entry) = lexicon::lookup(folded) {
            stood = self.verb(text, entry);
        } else if self.leading && !is_in(LEAD_INS, folded) {
            self.leading = false;
            // A first sentence that starts with no verb we know (a title) leaves the lead to
            // the second sentence.
            self.lead_open = self.sentence == 0 && !is_in(NEGATIONS, folded);
        }
        self.step(folded, stood);
        // A negation reaches over a chain of verbs: "not for composing or sending".
        let chains = stood || is_in(CONJUNCTIONS, folded) || lexicon::lookup(folded).is_some();
        if let Some((_, reach)) = self
            .negation
            .as_mut()
            .filter(|_| !chains || is_in(NEGATIONS, folded))
        {
            *reach -= 1;
            if *reach == 0 {
                self.negation = None;
            }
        }
    }

    /// Reads a known word; whether it stood as a verb.
    fn verb(&mut self, text: &str, entry: Entry) -> bool {
        let leads = self.leading && (self.sentence == 0 || (self.sentence == 1 && self.lead_open));
        if self.leading {
            self.leading = false;
            self.lead_open = false;
        }
        if entry.kind == Kind::Read {
            self.part_had_verb |= leads;
            // Reading words count only as the main verb: "Returns ..." leading the description.
            if leads && self.negation.is_none() {
                self.signals
                    .push(Kind::Read, SignalPlace::Description, text.to_owned(), None);
            }
            return leads;
        }
        if !self.stands_as_verb(entry) {
            return false;
        }
        let ignored = self
            .negation
            .as_ref()
            .map(|(word, _)| format!("under negation '{word}'"));
        let first_in_part = self.first_word;
        self.part_had_verb = true;
        self.part.push(Pending {
            kind: entry.kind,
            text: text.to_owned(),
            ignored,
            leads: first_in_part,
        });
        true
    }

    fn stands_as_verb(&self, entry: Entry) -> bool {
        let prev = Some(self.prev.as_str()).filter(|p| !p.is_empty());
        let prev2 = Some(self.prev2.as_str()).filter(|p| !p.is_empty());
        let after = |list: &[&str]| prev.is_some_and(|p| is_in(list, p));
        // What follows tells a verb from a noun too: "restore the backup", "logs are rotated".
        let object_follows = is_in(OBJECTS, &self.next);
        let auxiliary_follows = is_in(AUXILIARIES, &self.next);
        // "create or update", "list backups and restore the latest": joined by a conjunction
        // to a word that stood as a verb.
        let coordinated =
            after(CONJUNCTIONS) && (self.prev2_verb || (self.part_had_verb && object_follows));
        let verb_position = !auxiliary_follows
            && (prev.is_none()
                || coordinated
                || (after(VERB_MARKERS) && !after(CONJUNCTIONS))
                || after(SUBJECTS));
        match entry.form {
            Form::Participle => {
                // "is deleted" says what the tool does; "files that were deleted" describes files.
                let relative = |p: Option<&str>| {
                    p.is_some_and(|p| matches!(p, "that" | "which" | "who" | "que"))
                };
                let adverb = prev.is_some_and(|p| p.ends_with("ly") || p.ends_with("mente"));
                (after(AUXILIARIES) && !relative(prev2))
                    || (adverb && prev2.is_some_and(|p| is_in(AUXILIARIES, p)))
            }
            Form::Gerund => !after(NOUN_MARKERS),
            _ if entry.noun_prone => verb_position,
            // An English bare form mid-clause is a noun: "password reset", "purchase order".
            Form::Plain if entry.english => {
                verb_position || (after(CONJUNCTIONS) && self.part_had_verb)
            }
            // Portuguese: "o cancela" is a pronoun and a verb, not an article and a noun; the
            // forms that make nouns too are marked noun-prone above.
            Form::Plain | Form::Third => true,
        }
    }
}

/// Turns the signals into a kind, a source and a reason.
fn decide(signals: Vec<Signal>) -> Classification {
    let counted: Vec<&Signal> = signals.iter().filter(|s| s.counts()).collect();
    let first = |pred: &dyn Fn(&Signal) -> bool| counted.iter().copied().find(|s| pred(s));
    let destination = first(&|s| {
        matches!(
            s.place,
            SignalPlace::ArgumentName(_) | SignalPlace::ArgumentFormat(_)
        )
    });
    let sending = first(&|s| s.points_to == Kind::SendsOut);
    let writing = first(&|s| s.points_to == Kind::Write);
    let reading = first(&|s| s.points_to == Kind::Read);
    let textual = |k: Kind| {
        counted
            .iter()
            .any(|s| s.points_to == k && s.place != SignalPlace::Annotation)
    };

    let (kind, decider) = if let Some(s) = destination.or(sending) {
        (Kind::SendsOut, Some(s))
    } else if let Some(s) = writing {
        (Kind::Write, Some(s))
    } else if let Some(s) = reading {
        (Kind::Read, Some(s))
    } else {
        (Kind::Write, None)
    };
    let conflicted = reading.is_some() && kind != Kind::Read;
    let source = match kind {
        _ if decider.is_none() => KindSource::Unsure,
        Kind::Read if !textual(Kind::Read) => KindSource::Annotation,
        Kind::Write if !textual(Kind::Write) => KindSource::Annotation,
        _ => KindSource::Inferred,
    };
    let reason = match (decider, reading) {
        (None, _) => match signals.iter().find(|s| !s.counts()) {
            Some(s) => format!(
                "nothing tells what it does ({} does not count: {}); treated as a write",
                describe(s),
                s.ignored.as_deref().unwrap_or_default()
            ),
            None => "no verb, annotation, HTTP method or destination argument tells what it does; treated as a write".to_owned(),
        },
        (Some(decider), Some(read)) if conflicted => {
            format!("signals disagree: {}, but {}", claim(read), claim(decider))
        }
        (Some(decider), _) if kind == Kind::Read => {
            let also: Vec<String> = counted
                .iter()
                .filter(|s| s.points_to == Kind::Read && !std::ptr::eq(**s, decider))
                .take(2)
                .map(|s| describe(s))
                .collect();
            let also = if also.is_empty() { String::new() } else { format!(" (so does {})", also.join(", ")) };
            format!("{}{also}, and nothing writes or sends", claim(decider))
        }
        (Some(decider), _) => claim(decider),
    };
    Classification {
        kind,
        source,
        reason,
        signals,
        conflicted,
    }
}

/// A signal and what it says: "'send' in the name sends out", "argument 'to' is a destination".
pub fn claim(signal: &Signal) -> String {
    let verb = match signal.points_to {
        Kind::Read => "reads",
        Kind::Write => "writes",
        Kind::SendsOut => "sends out",
    };
    match &signal.place {
        SignalPlace::ArgumentName(path) => format!("argument '{path}' is a destination"),
        SignalPlace::ArgumentFormat(path) => {
            format!(
                "argument '{path}' has format {}, a destination",
                signal.text
            )
        }
        SignalPlace::Annotation => format!("{} says it {verb}", signal.text),
        SignalPlace::HttpMethod if signal.points_to == Kind::Write => {
            format!("HTTP {} changes something", signal.text)
        }
        _ => format!("{} {verb}", describe(signal)),
    }
}

/// A signal as a person would point at it: "'send' in the name".
pub fn describe(signal: &Signal) -> String {
    let text = &signal.text;
    match &signal.place {
        SignalPlace::Name => format!("'{text}' in the name"),
        SignalPlace::Description => format!("'{text}' in the description"),
        SignalPlace::ArgumentName(path) => format!("argument '{path}'"),
        SignalPlace::ArgumentFormat(path) => format!("argument '{path}' (format {text})"),
        SignalPlace::HttpMethod => format!("HTTP {text}"),
        SignalPlace::Annotation => text.clone(),
    }
}
