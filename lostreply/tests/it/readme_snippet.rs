//! The README's `cargo test` snippet works as written: a throw-away crate
//! outside the workspace depends on the facade by path, implements a tiny
//! adapter, pastes the README's TOML and Rust, and `cargo test` on it behaves
//! as libtest users expect (one test per scenario, `--list`, filters,
//! `--exact`, `--ignored`, `--format terse`).
//!
//! It builds a second crate graph, so its first run compiles lostreply's
//! dependencies into `target/readme-snippet` (a few minutes on two cores);
//! later runs reuse them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The fenced block of `lang` that follows the README's `### In \`cargo test\`` heading.
fn snippet(readme: &str, lang: &str) -> String {
    let section = &readme[readme.find("### In `cargo test`").expect("the section")..];
    let fence = format!("```{lang}\n");
    let start = section.find(&fence).expect("the fence") + fence.len();
    let body = &section[start..];
    body[..body.find("```").expect("its end")].to_owned()
}

/// The adapter a user brings, written against the facade alone. To stay tiny
/// and still pass, it forwards each call to the bundled reference adapter;
/// what it shows is the shape: an `AdapterFactory` building an `Adapter`.
const LIB_RS: &str = r#"
use std::path::Path;

use lostreply::protocol::{
    ExecuteRequest, OperationRequest, OutcomeReply, ResolveRequest, WebhookReply, WebhookRequest,
};
use lostreply::{Adapter, AdapterFactory, AdapterFailure};

pub struct MyAdapter {
    inner: Box<dyn Adapter>,
}

#[lostreply::async_trait]
impl Adapter for MyAdapter {
    async fn execute(&self, r: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.inner.execute(r).await
    }
    async fn reconcile(&self, r: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.inner.reconcile(r).await
    }
    async fn webhook(&self, r: WebhookRequest) -> Result<WebhookReply, AdapterFailure> {
        self.inner.webhook(r).await
    }
    async fn resolve(&self, r: ResolveRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.inner.resolve(r).await
    }
    async fn status(&self, r: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.inner.status(r).await
    }
}

pub struct MyAdapterFactory;

impl AdapterFactory for MyAdapterFactory {
    fn name(&self) -> String {
        "my-adapter".to_owned()
    }

    fn build(&self, state_dir: &Path) -> Result<Box<dyn Adapter>, AdapterFailure> {
        let reference = lostreply_reference::ReferenceFactory;
        Ok(Box::new(MyAdapter { inner: reference.build(state_dir)? }))
    }
}
"#;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn throwaway_crate(dir: &Path) {
    let root = workspace();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let toml = snippet(&readme, "toml").replace(
        "path/to/lostreply/lostreply",
        &root.join("lostreply").display().to_string(),
    );
    assert!(
        toml.contains(&root.join("lostreply").display().to_string()),
        "the README's snippet names the facade by path:\n{toml}"
    );
    // The tiny adapter forwards to the reference adapter, which the facade
    // does not export: the crate names it by path beside the README's lines.
    let reference = format!(
        "lostreply-reference = {{ path = \"{}\" }}\n",
        root.join("reference").display()
    );
    let toml = toml.replacen(
        "[dependencies]\n",
        &format!("[dependencies]\n{reference}"),
        1,
    );
    let manifest = format!(
        "[package]\nname = \"my_crate\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [workspace]\n\n{toml}"
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), LIB_RS).unwrap();
    std::fs::write(dir.join("tests/lostreply.rs"), snippet(&readme, "rust")).unwrap();
    // The workspace's lock file pins the versions this repository is tested with.
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
}

fn cargo_test(dir: &Path, args: &[&str]) -> Output {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    Command::new(cargo)
        .current_dir(dir)
        .env(
            "CARGO_TARGET_DIR",
            workspace().join("target/readme-snippet"),
        )
        // The throw-away crate is outside the workspace, so the workspace's
        // lean profile does not reach it; without this its second crate graph
        // would carry full debug info (gigabytes of disk) for nothing.
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .args(["test", "--offline", "--test", "lostreply", "--"])
        .args(args)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_readme_cargo_test_snippet_works_as_written() {
    let dir = tempfile::tempdir().unwrap();
    throwaway_crate(dir.path());

    // One test per built-in scenario, listed by name.
    let list = cargo_test(dir.path(), &["--list"]);
    assert!(
        list.status.success(),
        "{}\n{}",
        stdout(&list),
        String::from_utf8_lossy(&list.stderr)
    );
    let listed: Vec<String> = stdout(&list)
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_owned)
        .collect();
    // testing::main runs the library as a default run takes it (no opt-in `mcp` scenario).
    let library = lostreply_harness::scenario::select::default_library().unwrap();
    assert_eq!(listed.len(), library.len(), "{listed:?}");
    assert!(listed.contains(&"case02::case02-lost-after-commit".to_owned()));

    // A filter runs the matching scenarios, and they pass.
    let filtered = cargo_test(dir.path(), &["case02"]);
    let text = stdout(&filtered);
    assert!(filtered.status.success(), "{text}");
    assert!(text.contains("2 passed"), "{text}");

    // --exact runs exactly one; --format terse prints a dot per test.
    let exact = cargo_test(
        dir.path(),
        &[
            "--exact",
            "case02::case02-lost-after-commit",
            "--format",
            "terse",
        ],
    );
    let text = stdout(&exact);
    assert!(exact.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");
    assert!(text.lines().any(|l| l.trim() == "."), "{text}");

    // No scenario is ignored: --ignored runs nothing and succeeds.
    let ignored = cargo_test(dir.path(), &["--ignored"]);
    let text = stdout(&ignored);
    assert!(ignored.status.success(), "{text}");
    assert!(text.contains("0 passed"), "{text}");
}
