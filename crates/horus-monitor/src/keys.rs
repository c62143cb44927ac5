//! Keys of the terminal UI, as commands.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What a key asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Command {
    /// `q`, Ctrl-C; Esc on the tables.
    Quit,
    /// Esc or Backspace: from a detail view back to the tables (Esc quits from the tables).
    Escape,
    /// Tab, Shift-Tab: the other table.
    SwitchTable,
    /// `s`: sort the current table on its next column.
    NextSort,
    /// Up, `k`.
    Up,
    /// Down, `j`.
    Down,
    /// Home, `g`.
    First,
    /// End, `G`.
    Last,
    /// Enter: the selected topic or node in detail (and back).
    Enter,
    /// `t`: the tf frames (and back).
    Tf,
}

/// The command of a key event, if it has one (key releases and repeats of other keys have
/// none).
pub(crate) fn command(k: KeyEvent) -> Option<Command> {
    if k.kind == KeyEventKind::Release {
        return None;
    }
    if k.modifiers.contains(KeyModifiers::CONTROL) {
        return matches!(k.code, KeyCode::Char('c') | KeyCode::Char('d')).then_some(Command::Quit);
    }
    Some(match k.code {
        KeyCode::Char('q') | KeyCode::Char('Q') => Command::Quit,
        KeyCode::Esc | KeyCode::Backspace => Command::Escape,
        KeyCode::Tab | KeyCode::BackTab => Command::SwitchTable,
        KeyCode::Char('s') | KeyCode::Char('S') => Command::NextSort,
        KeyCode::Up | KeyCode::Char('k') => Command::Up,
        KeyCode::Down | KeyCode::Char('j') => Command::Down,
        KeyCode::Home | KeyCode::Char('g') => Command::First,
        KeyCode::End | KeyCode::Char('G') => Command::Last,
        KeyCode::Enter => Command::Enter,
        KeyCode::Char('t') | KeyCode::Char('T') => Command::Tf,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_to_commands() {
        let k = |c| KeyEvent::new(c, KeyModifiers::NONE);
        assert_eq!(command(k(KeyCode::Char('q'))), Some(Command::Quit));
        assert_eq!(command(k(KeyCode::Esc)), Some(Command::Escape));
        assert_eq!(command(k(KeyCode::Tab)), Some(Command::SwitchTable));
        assert_eq!(command(k(KeyCode::Enter)), Some(Command::Enter));
        assert_eq!(command(k(KeyCode::Char('s'))), Some(Command::NextSort));
        assert_eq!(command(k(KeyCode::Char('t'))), Some(Command::Tf));
        assert_eq!(command(k(KeyCode::Char('x'))), None);
        assert_eq!(
            command(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Command::Quit)
        );
    }
}
