//! `chaos`: the chaos soak of horus topics (see docs/chaos.md).
//!
//! `chaos [options]` runs the orchestrator; `chaos __child …` is one of its
//! Rust children (hidden: only the orchestrator starts it).

mod analysis;
mod checks;
mod child;
mod child_pub;
mod child_sub;
mod options;
mod orchestrator;
mod output;
mod report;
mod report_writer;
mod summary;
mod wire;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let result = if args.first().map(String::as_str) == Some("__child") {
        args.remove(0);
        child::ChildArgs::parse(args).and_then(child::run)
    } else if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{}", options::USAGE);
        Ok(0)
    } else {
        options::Options::parse(args).and_then(|o| orchestrator::run(&o))
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("chaos: {e:#}");
            std::process::exit(2);
        }
    }
}
