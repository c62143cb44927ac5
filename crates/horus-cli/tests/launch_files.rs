//! `horus launch` files: includes with arguments and namespaces, and every kind of
//! malformed file rejected with its file, line and column before anything starts.

mod launch_support;

use launch_support::*;

#[test]
fn include_passes_arguments_and_namespace() {
    let d = Dir::new("include");
    d.write(
        "part.yaml",
        r#"
args:
  word: null
  name: part
processes:
  - name: $(arg name)
    shell: 'echo "$0: $(arg word) in $HORUS_NAMESPACE with $GREETING_ENV"'
    args: ["$(arg name)"]
"#,
    );
    let main = d.write(
        "main.yaml",
        r#"
args:
  greeting: hi
env:
  GREETING_ENV: from-main
include:
  - file: part.yaml
    args: { word: "$(arg greeting)", name: one }
    namespace: space-one
  - file: $(dirname)/part.yaml
    args: { word: plain, name: two }
processes:
  - name: own
    shell: 'echo own in ${HORUS_NAMESPACE:-inherited}'
    namespace: space-own
"#,
    );
    let (status, doc, stderr) = launch_json(&main, &["greeting:=hello"]);
    assert_eq!(status.code(), Some(0), "{doc}\n{stderr}");
    assert!(
        stderr.contains("one | one: hello in space-one with from-main"),
        "{stderr}"
    );
    assert!(stderr.contains("two | two: plain in"), "{stderr}");
    assert!(stderr.contains("own | own in space-own"), "{stderr}");
    let names: Vec<&str> = doc["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["one", "two", "own"]);
}

/// `horus launch FILE` must refuse the file with `FILE:LINE:COLUMN: ...message...`, exit 2
/// and start nothing (the file's first process would create `started`).
fn rejected(tag: &str, body: &str, line: usize, column: usize, message: &str) {
    let d = Dir::new(&format!("bad-{tag}"));
    let marker = d.path("started");
    let text = format!(
        "processes:\n  - name: witness\n    command: [touch, {}]\n{body}",
        marker.display()
    );
    let f = d.write("bad.yaml", &text);
    let mut cmd = horus();
    cmd.arg("launch").arg(&f);
    let out = output_bounded(cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{tag}: {stderr}");
    let want = format!("{}:{line}:{column}: ", f.display());
    assert!(
        stderr.contains(&want) && stderr.contains(message),
        "{tag}: expected {want}...{message}, got:\n{stderr}\n--- file:\n{text}"
    );
    assert!(stderr.contains("nothing was started"), "{stderr}");
    assert!(!marker.exists(), "{tag}: a process was started");
}

#[test]
fn malformed_files_are_rejected_with_their_position_before_anything_starts() {
    // Line 1-3 are the witness process (see `rejected`).
    rejected(
        "unknown-key",
        "  - name: b\n    shell: x\n    restrat: always\n",
        6,
        5,
        "unknown field `restrat`",
    );
    rejected(
        "wrong-type",
        "  - name: b\n    shell: x\n    restart: sometimes\n",
        6,
        14,
        "unknown variant `sometimes`",
    );
    rejected(
        "wrong-type-number",
        "  - name: b\n    shell: x\n    max_restarts: [1]\n    restart: always\n",
        6,
        19,
        "invalid type: sequence, expected u32",
    );
    rejected(
        "missing-command",
        "  - name: b\n    after: witness\n",
        4,
        5,
        "missing command",
    );
    rejected(
        "missing-name",
        "  - shell: x\n",
        4,
        5,
        "missing field `name`",
    );
    rejected(
        "duplicate-name",
        "  - name: c\n    shell: x\n  - name: witness\n    shell: y\n",
        6,
        11,
        "duplicate process name `witness` (first defined at",
    );
    rejected(
        "cycle",
        "  - name: a\n    shell: x\n    after: b\n  - name: b\n    shell: x\n    after: [c]\n  - name: c\n    shell: x\n    after: [a]\n",
        12,
        13,
        "cycle in `after:`",
    );
    rejected(
        "unknown-after",
        "  - name: a\n    shell: x\n    after: [witness, ghost]\n",
        6,
        22,
        "no process is named `ghost`",
    );
    rejected(
        "two-commands",
        "  - name: a\n    shell: x\n    module: y\n",
        5,
        12,
        "give only one command",
    );
    rejected(
        "include-not-found",
        "include:\n  - file: nowhere.yaml\n",
        5,
        11,
        "included file not found",
    );
    rejected(
        "undeclared-arg",
        "  - name: a\n    shell: 'echo $(arg speed)'\n",
        5,
        12,
        "no argument `speed` is declared",
    );
    rejected(
        "yaml-syntax",
        "  - name: a\n  shell: x\n",
        5,
        3,
        "did not find expected '-' indicator",
    );
}

#[test]
fn a_bad_argument_of_an_included_file_is_reported_at_the_include() {
    let d = Dir::new("bad-include-arg");
    d.write("part.yaml", "args:\n  word: null\nprocesses: []\n");
    let f = d.write(
        "main.yaml",
        "include:\n  - file: part.yaml\n    args: {wrd: x}\n",
    );
    let (status, doc, _) = launch_json(&f, &[]);
    assert_eq!(status.code(), Some(2), "{doc}");
    assert_eq!(
        (doc["line"].as_u64(), doc["column"].as_u64()),
        (Some(2), Some(5)),
        "{doc}"
    );
    assert!(
        doc["message"]
            .as_str()
            .unwrap()
            .contains("argument `wrd` is not declared"),
        "{doc}"
    );
    // A required argument left out is reported at its declaration.
    let f = d.write("main2.yaml", "include:\n  - file: part.yaml\n");
    let (status, doc, _) = launch_json(&f, &[]);
    assert_eq!(status.code(), Some(2), "{doc}");
    assert!(
        doc["file"].as_str().unwrap().ends_with("part.yaml"),
        "{doc}"
    );
    assert_eq!(
        (doc["line"].as_u64(), doc["column"].as_u64()),
        (Some(2), Some(9)),
        "{doc}"
    );
    assert!(
        doc["message"]
            .as_str()
            .unwrap()
            .contains("by the include at"),
        "{doc}"
    );
}

/// `horus launch FILE` refuses the file: exit 2, `message` on stderr, nothing started.
fn refused_fast(f: &std::path::Path, message: &str) -> String {
    let mut cmd = horus();
    cmd.arg("launch").arg(f);
    let out = output_bounded(cmd);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(message),
        "expected {message:?}, got:\n{stderr}"
    );
    assert!(stderr.contains("nothing was started"), "{stderr}");
    stderr
}

#[test]
fn include_diamond_is_bounded() {
    // Each file includes the next one twice: 2^30 loads of 30 small files. The loader had no
    // limit and expanded them all.
    let d = Dir::new("diamond");
    let marker = d.path("started");
    for i in 0..30 {
        let next = format!("level{}.yaml", i + 1);
        d.write(
            &format!("level{i}.yaml"),
            &format!("include:\n  - file: {next}\n  - file: {next}\n"),
        );
    }
    d.write(
        "level30.yaml",
        &format!(
            "processes:\n  - name: p\n    command: [touch, {}]\n",
            marker.display()
        ),
    );
    let top = d.path("level0.yaml");
    let stderr = refused_fast(&top, "more than 1000 files loaded in all");
    // Named at the include that went past the limit: file, line and column (depth first: the
    // 1000th load is deep in the first branches).
    assert!(
        stderr.contains("level28.yaml:2:11: more than 1000"),
        "{stderr}"
    );
    assert!(!marker.exists());

    // A chain deeper than 32 files is refused where it goes past.
    let d = Dir::new("deep");
    for i in 0..40 {
        d.write(
            &format!("chain{i}.yaml"),
            &format!("include:\n  - file: chain{}.yaml\n", i + 1),
        );
    }
    d.write("chain40.yaml", "processes: []\n");
    let stderr = refused_fast(&d.path("chain0.yaml"), "includes nest deeper than 32 files");
    assert!(stderr.contains("chain31.yaml:2:11: "), "{stderr}");
}

#[test]
fn arguments_doubled_through_includes_are_bounded() {
    // `w` doubles at every level: 2^40 bytes at the bottom.
    let d = Dir::new("doubling");
    for i in 0..30 {
        d.write(
            &format!("d{i}.yaml"),
            &format!(
                "args:\n  w: x\ninclude:\n  - file: d{}.yaml\n    args: {{ w: \"$(arg w)$(arg w)\" }}\n",
                i + 1
            ),
        );
    }
    d.write("d30.yaml", "args:\n  w: x\n");
    refused_fast(
        &d.path("d0.yaml"),
        "substituted value longer than 65536 bytes",
    );
}

#[test]
fn yaml_alias_bomb_is_refused() {
    // 10^8 nodes from 80 KB of aliases, which serde_yaml's own alias limit lets through.
    let d = Dir::new("laughs");
    let big = vec!["x"; 10_000].join(", ");
    let refs = vec!["*big"; 10_000].join(", ");
    let f = d.write(
        "bomb.yaml",
        &format!("args:\n  a: &big [{big}]\nprocesses:\n  - name: p\n    command: [{refs}]\n"),
    );
    refused_fast(&f, "YAML nodes with its aliases replayed");
}
