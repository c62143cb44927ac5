//! The terminal UI's loop: redraw every refresh period and at each key, until a quit key
//! or the caller's stop condition (`horus monitor`: SIGINT/SIGTERM).

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event};

use crate::app::{App, Outcome, Screen};
use crate::keys::command;
use crate::sampler::Sampler;
use crate::{detail, tf_view, view};

/// How often the figures are refreshed.
pub(crate) const REFRESH: Duration = Duration::from_millis(500);
/// Longest wait for a key between checks for a signal.
const TICK: Duration = Duration::from_millis(100);

/// Why [`run_tui`](crate::run_tui) failed.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// The terminal could not be put into the UI's mode (raw, alternate screen).
    #[error("cannot set up the terminal: {0}")]
    Setup(#[source] std::io::Error),
    /// Drawing on the terminal failed.
    #[error("cannot draw on the terminal: {0}")]
    Draw(#[source] std::io::Error),
    /// Reading keys from the terminal failed.
    #[error("cannot read the terminal's input: {0}")]
    Input(#[source] std::io::Error),
}

/// Runs the UI on the terminal (rates and latencies over `window`) until the user quits or
/// `stop()` returns true (checked at least every 100 ms); the terminal is restored either way.
pub fn run(sampler: &Sampler, window: Duration, stop: impl Fn() -> bool) -> Result<(), TuiError> {
    let mut terminal = ratatui::try_init().map_err(TuiError::Setup)?;
    let result = event_loop(&mut terminal, sampler, window, stop);
    ratatui::restore();
    result
}

fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    sampler: &Sampler,
    window: Duration,
    stop: impl Fn() -> bool,
) -> Result<(), TuiError> {
    let mut app = App::new();
    let mut snap = sampler.snapshot(window);
    let mut next_refresh = Instant::now() + REFRESH;
    let mut dirty = true;
    while !stop() {
        if dirty {
            terminal
                .draw(|f| match &app.screen {
                    Screen::Tables => view::draw(f, &app, &snap),
                    Screen::Topic(name) => detail::draw_topic(f, &snap, name),
                    Screen::Node(key) => detail::draw_node(f, &snap, key),
                    Screen::Tf => tf_view::draw(f, &snap),
                })
                .map_err(TuiError::Draw)?;
            dirty = false;
        }
        let now = Instant::now();
        if now >= next_refresh {
            snap = sampler.snapshot(window);
            next_refresh = now + REFRESH;
            dirty = true;
            continue;
        }
        if !event::poll((next_refresh - now).min(TICK)).map_err(TuiError::Input)? {
            continue;
        }
        match event::read().map_err(TuiError::Input)? {
            Event::Key(k) => {
                if let Some(c) = command(k) {
                    if app.apply(c, &snap) == Outcome::Quit {
                        return Ok(());
                    }
                    dirty = true;
                }
            }
            Event::Resize(..) => dirty = true,
            _ => {}
        }
    }
    Ok(())
}
