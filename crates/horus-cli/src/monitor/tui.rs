//! The terminal UI's loop: redraw every refresh period and at each key, until a quit key
//! or SIGINT/SIGTERM.

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event};

use super::app::{App, Outcome, Screen};
use super::keys::command;
use super::sampler::Sampler;
use super::{detail, tf_view, view};
use horus_launch::signals;

/// How often the figures are refreshed.
pub(crate) const REFRESH: Duration = Duration::from_millis(500);
/// Longest wait for a key between checks for a signal.
const TICK: Duration = Duration::from_millis(100);

/// Runs the UI on the terminal until the user quits.
pub(crate) fn run(sampler: &Sampler, window: Duration) -> anyhow::Result<()> {
    let mut terminal = ratatui::try_init()?;
    let result = event_loop(&mut terminal, sampler, window);
    ratatui::restore();
    result
}

fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    sampler: &Sampler,
    window: Duration,
) -> anyhow::Result<()> {
    let mut app = App::new();
    let mut snap = sampler.snapshot(window);
    let mut next_refresh = Instant::now() + REFRESH;
    let mut dirty = true;
    while signals::count() == 0 {
        if dirty {
            terminal.draw(|f| match &app.screen {
                Screen::Tables => view::draw(f, &app, &snap),
                Screen::Topic(name) => detail::draw_topic(f, &snap, name),
                Screen::Node(key) => detail::draw_node(f, &snap, key),
                Screen::Tf => tf_view::draw(f, &snap),
            })?;
            dirty = false;
        }
        let now = Instant::now();
        if now >= next_refresh {
            snap = sampler.snapshot(window);
            next_refresh = now + REFRESH;
            dirty = true;
            continue;
        }
        if !event::poll((next_refresh - now).min(TICK))? {
            continue;
        }
        match event::read()? {
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
