//! Prints the schema-derived instances of the `$defs` entries named on the command line.
//! `cargo run -p acp-testkit --example dump_instances -- schema/v2/schema.json ContentBlock`
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((file, names)) = args.split_first() else {
        eprintln!("usage: dump_instances SCHEMA_FILE NAME...");
        std::process::exit(2);
    };
    let schema = acp_testkit::schema::Schema::load(file);
    for name in names {
        for instance in acp_testkit::instances::build(schema.root(), name) {
            let valid = match schema.validate_def(name, &instance.value) {
                Ok(()) => "valid".to_owned(),
                Err(err) => format!("INVALID: {err}"),
            };
            println!("{name} [{}] {valid}\n  {}", instance.label, instance.value);
        }
    }
}
