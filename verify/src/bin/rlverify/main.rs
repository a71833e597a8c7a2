//! `rlverify` command line (STUB: replaced by the CLI module).
fn main() {
    eprintln!("rlverify {}", rlverify::VERSION);
}
