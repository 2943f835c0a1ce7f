//! The generator finds the workspace it is run in, not the one it was built in: a copy of the
//! binary run in another workspace (as cargo does when two checkouts share a target directory)
//! generates into that workspace.

use std::path::Path;
use std::process::Command;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("readable") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copied");
        }
    }
}

#[test]
fn a_moved_copy_generates_into_the_workspace_it_runs_in() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf();
    let scratch = std::env::temp_dir().join(format!("acp-xtask-moved-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let workspace = scratch.join("elsewhere");
    copy_dir(&here.join("schema"), &workspace.join("schema"));
    std::fs::write(workspace.join("Cargo.toml"), "[workspace]\nmembers = []\n").expect("manifest");
    let moved = scratch.join("bin").join("xtask");
    std::fs::create_dir_all(moved.parent().expect("dir")).expect("mkdir");
    std::fs::copy(env!("CARGO_BIN_EXE_xtask"), &moved).expect("copied");

    // Run from a subdirectory, as cargo would with the manifest dir of that workspace's xtask.
    let xtask_dir = workspace.join("xtask");
    std::fs::create_dir_all(&xtask_dir).expect("mkdir");
    let output = Command::new(&moved)
        .arg("codegen")
        .env("CARGO_MANIFEST_DIR", &xtask_dir)
        .current_dir(&scratch)
        .output()
        .expect("runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for generated in [
        "crates/acp-v1/src/generated/models.rs",
        "crates/acp-v2/src/generated/models.rs",
    ] {
        assert!(
            workspace.join(generated).is_file(),
            "{generated} written into the workspace it ran in"
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
