//! `hlctl`: the command-line client. All logic lives in the library.

fn main() {
    std::process::exit(hlctl::cli::main());
}
