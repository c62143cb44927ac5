//! Children's output, line by line, prefixed with the process name (`name | line`),
//! coloured when the stream is a terminal. A child's stdout goes to our stdout and its
//! stderr to our stderr (with `--json`, both go to stderr: stdout carries only the JSON
//! summary). Each line is written with one locked write, so lines of different processes
//! never mix.

use std::io::{BufRead, BufReader, IsTerminal, Read, Write};
use std::thread::JoinHandle;

/// ANSI colours given to processes in turn.
const PALETTE: [&str; 10] = ["36", "33", "35", "32", "34", "96", "93", "95", "92", "94"];

/// Where prefixed lines go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sink {
    Stdout,
    Stderr,
}

impl Sink {
    fn is_terminal(self) -> bool {
        match self {
            Sink::Stdout => std::io::stdout().is_terminal(),
            Sink::Stderr => std::io::stderr().is_terminal(),
        }
    }

    fn write_line(self, line: &[u8]) {
        // A closed stdout/stderr (the reader went away) must not stop the launch.
        let _ = match self {
            Sink::Stdout => std::io::stdout().lock().write_all(line),
            Sink::Stderr => std::io::stderr().lock().write_all(line),
        };
    }
}

/// How one process's lines are labelled.
#[derive(Clone, Debug)]
pub(crate) struct Label {
    /// `name` padded to the longest name.
    padded: String,
    colour: &'static str,
}

impl Label {
    /// The label of the `index`th process, padded to `width`.
    pub(crate) fn new(name: &str, index: usize, width: usize) -> Label {
        Label {
            padded: format!("{name:<width$}"),
            colour: PALETTE[index % PALETTE.len()],
        }
    }

    fn prefix(&self, sink: Sink) -> Vec<u8> {
        if sink.is_terminal() {
            format!("\x1b[{}m{}\x1b[0m | ", self.colour, self.padded).into_bytes()
        } else {
            format!("{} | ", self.padded).into_bytes()
        }
    }
}

/// Copies `from` to `sink` line by line, each prefixed by `label`, until end of file.
pub(crate) fn pump(from: impl Read + Send + 'static, label: &Label, sink: Sink) -> JoinHandle<()> {
    let prefix = label.prefix(sink);
    std::thread::spawn(move || {
        let mut reader = BufReader::new(from);
        let mut buf = Vec::with_capacity(256);
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    let mut line = prefix.clone();
                    line.extend_from_slice(&buf);
                    if !buf.ends_with(b"\n") {
                        line.push(b'\n');
                    }
                    sink.write_line(&line);
                }
            }
        }
    })
}

/// A message of `horus launch` itself, on stderr: `launch: ...`.
pub(crate) fn event(message: &str) {
    Sink::Stderr.write_line(format!("launch: {message}\n").as_bytes());
}
