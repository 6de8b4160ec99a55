use purko_analysis::{CheckList, CodeLanguage, Verdict, check};

fn verdict(code: &str) -> Verdict {
    check(code, CodeLanguage::Python, &CheckList::default())
}

fn apis(code: &str) -> Vec<String> {
    verdict(code).hits.into_iter().map(|h| h.api).collect()
}

#[track_caller]
fn refused(code: &str, api: &str) {
    let apis = apis(code);
    assert!(
        apis.iter().any(|a| a == api),
        "expected {api} in {apis:?} for:\n{code}"
    );
}

#[track_caller]
fn allowed(code: &str) {
    let verdict = verdict(code);
    assert!(verdict.allows(), "expected allow for:\n{code}\n{verdict:?}");
}

#[test]
fn plain_computation_is_allowed() {
    allowed("import json, math\nprint(json.dumps({'a': math.sqrt(2)}))\n");
    allowed("import os\nprint(os.path.join('a', 'b'), os.getcwd())\n");
    allowed("def evaluate(x):\n    return x * 2\nprint(evaluate(3))\n");
    allowed("data = {'eval': 1}\nprint(data['eval'])\n");
    allowed("import pandas as pd\nimport numpy as np\n");
    allowed("code = 'x = 1'\nsocket = None\nprint(code, socket)\n");
}

#[test]
fn direct_calls_are_refused() {
    refused("import os\nos.system('ls')\n", "os.system");
    refused("import os\nos.popen('ls').read()\n", "os.popen");
    refused("import os\nos.execvp('ls', ['ls'])\n", "os.execvp");
    refused("import os\nos.spawnl(os.P_WAIT, '/bin/ls')\n", "os.spawnl");
    refused("eval('1+1')\n", "eval");
    refused("exec('x=1')\n", "exec");
    refused("compile('x=1', 'f', 'exec')\n", "compile");
    refused("__import__('os')\n", "__import__");
    refused(
        "import importlib\nimportlib.import_module('os')\n",
        "importlib.import_module",
    );
}

#[test]
fn dangerous_modules_are_refused_at_import() {
    refused("import subprocess\n", "subprocess");
    refused("import socket\n", "socket");
    refused("import shutil\n", "shutil");
    refused("import ctypes\n", "ctypes");
    refused("import pty\n", "pty");
    refused("from subprocess import run\n", "subprocess.run");
    refused("import os.path, subprocess as sp\n", "subprocess");
}

#[test]
fn aliases_are_resolved() {
    refused("import os as o\no.system('id')\n", "os.system");
    refused("from os import system as s\ns('id')\n", "os.system");
    refused("import builtins\nbuiltins.eval('1')\n", "eval");
    refused("import builtins\ngetattr(builtins, 'eval')('1')\n", "eval");
    refused("getattr(__builtins__, 'exec')('x=1')\n", "exec");
    refused("__builtins__.__dict__['eval']('1')\n", "eval");
    refused("globals()['__builtins__'].eval('1')\n", "eval");
    refused("__import__('os').system('id')\n", "os.system");
    refused(
        "import importlib as il\nil.import_module('subprocess').run(['id'])\n",
        "subprocess.run",
    );
    refused("import os\nrun = os.system\nrun('id')\n", "os.system");
    refused("e = eval\ne('1')\n", "eval");
    refused("import os\nf, g = os.popen, print\nf('id')\n", "os.popen");
    refused("import sys\nsys.modules['os'].system('id')\n", "os.system");
    refused("import os\nos.__dict__['system']('id')\n", "os.system");
    refused(
        "import builtins\nbuiltins.__dict__['ex' 'ec']('x=1')\n",
        "exec",
    );
    refused(
        "import builtins\ngetattr(builtins, '\\x65val')('1')\n",
        "eval",
    );
}

#[test]
fn the_same_powers_under_other_names_are_refused() {
    refused("import posix\nposix.system('id')\n", "posix.system");
    refused("import _posixsubprocess\n", "_posixsubprocess");
    refused(
        "import pickle\npickle.loads(b'cos\\nsystem\\n')\n",
        "pickle.loads",
    );
    refused(
        "import runpy\nrunpy.run_path('/tmp/x.py')\n",
        "runpy.run_path",
    );
    refused(
        "import os\nos.__getattribute__('system')('id')\n",
        "os.system",
    );
    refused(
        "import os\nobject.__getattribute__(os, 'system')('id')\n",
        "os.system",
    );
    refused("from multiprocessing import Pool\n", "multiprocessing.Pool");
    allowed("import pickle\nprint(pickle.dumps([1, 2]))\n");
}

#[test]
fn a_dynamically_imported_module_is_tracked_through_a_name() {
    let list: CheckList =
        serde_json::from_str(r#"{"python": {"remove": ["__import__"]}}"#).unwrap();
    let verdict = check(
        "o = __import__('os')\no.system('id')\n",
        CodeLanguage::Python,
        &list,
    );
    assert_eq!(
        verdict
            .hits
            .iter()
            .map(|h| h.api.as_str())
            .collect::<Vec<_>>(),
        ["os.system"]
    );
}

#[test]
fn references_without_a_call_are_refused() {
    refused("import os\nlist(map(os.system, ['id']))\n", "os.system");
}

#[test]
fn dynamic_lookups_that_could_reach_a_refused_api_are_refused() {
    refused(
        "import builtins\nname = 'ev' + 'al'\ngetattr(builtins, name)('1')\n",
        "dynamic-lookup",
    );
    refused("import os\nn = input()\ngetattr(os, n)('id')\n", "os.?");
    refused("from os import *\nsystem('id')\n", "os.system");
    refused("().__class__.__base__.__subclasses__()\n", "__subclasses__");
    refused(
        "def f(): pass\nf.__globals__['__builtins__']\n",
        "__globals__",
    );
}

#[test]
fn comments_never_switch_the_check_off() {
    refused("import os\nos.system('id')  # nosec\n", "os.system");
    refused(
        "# purko: allow\nimport os\nos.system('id')  # noqa\n",
        "os.system",
    );
}

#[test]
fn names_in_strings_and_comments_are_not_calls() {
    allowed("print('os.system is refused')\n# eval(x)\n");
}

#[test]
fn code_that_does_not_parse_is_refused() {
    let verdict = verdict("import os\ndef f(:\n    pass\n");
    assert!(!verdict.allows());
    assert_eq!(verdict.hits[0].api, "syntax");
    assert_eq!(verdict.hits[0].line, 2);
}

#[test]
fn a_source_encoding_other_than_utf8_is_refused() {
    refused("# -*- coding: utf-7 -*-\nprint(1)\n", "source-encoding");
    allowed("# -*- coding: utf-8 -*-\nprint(1)\n");
}

#[test]
fn hits_carry_line_api_and_why() {
    let verdict = verdict("x = 1\nimport os as o\no.system('id')\n");
    assert_eq!(verdict.hits.len(), 1, "{verdict:?}");
    let hit = &verdict.hits[0];
    assert_eq!((hit.line, hit.api.as_str()), (3, "os.system"));
    assert_eq!(hit.why, "runs a shell command (reached as `o.system`)");
}

#[test]
fn the_list_can_be_replaced_or_extended() {
    let extended: CheckList =
        serde_json::from_str(r#"{"python": {"extend": ["requests"], "remove": ["shutil"]}}"#)
            .unwrap();
    let code = "import requests, shutil\nrequests.get('http://x')\n";
    let verdict = check(code, CodeLanguage::Python, &extended);
    let apis: Vec<_> = verdict.hits.iter().map(|h| h.api.as_str()).collect();
    assert_eq!(apis, ["requests", "requests.get"]);
    let replaced: CheckList =
        serde_json::from_str(r#"{"python": [{"api": "math", "why": "no maths"}]}"#).unwrap();
    assert!(
        check(
            "import os\nos.system('id')\n",
            CodeLanguage::Python,
            &replaced
        )
        .allows()
    );
    assert!(!check("import math\n", CodeLanguage::Python, &replaced).allows());
    assert_eq!(replaced.bash, CheckList::default().bash);
    assert!(serde_json::from_str::<CheckList>(r#"{"python": [""]}"#).is_err());
    assert!(serde_json::from_str::<CheckList>(r#"{"pyhton": []}"#).is_err());
}

#[test]
fn nul_bytes_and_huge_code_are_refused() {
    assert_eq!(apis("print(1)\0"), ["binary"]);
    let huge = "x = 1\n".repeat(300_000);
    assert_eq!(apis(&huge), ["size"]);
}
