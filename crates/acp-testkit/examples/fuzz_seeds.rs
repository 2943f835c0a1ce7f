//! Writes the fuzz targets' seed corpora (`acp_testkit::fuzz::seeds`) into a directory, one file
//! per seed named by its content's hash: `cargo run -p acp-testkit --features fuzz --example
//! fuzz_seeds -- fuzz/corpus` (what `fuzz/seed.sh` runs).

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;

use acp_testkit::fuzz::{seeds, Target};

fn main() -> std::io::Result<()> {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("fuzz/corpus"));
    for target in Target::ALL {
        let dir = out.join(target.name());
        std::fs::create_dir_all(&dir)?;
        let corpus = seeds(target);
        for seed in &corpus {
            let mut hasher = DefaultHasher::new();
            seed.hash(&mut hasher);
            std::fs::write(dir.join(format!("{:016x}", hasher.finish())), seed)?;
        }
        println!("{}: {} seeds", dir.display(), corpus.len());
    }
    Ok(())
}
