//! Keys for `horus play` on a terminal: space pauses and resumes, `s` publishes one message
//! while paused. Raw (non-canonical, no echo) mode on stdin while playing, restored on drop.

/// A key press that changes playback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Key {
    /// Space: pause or resume.
    Toggle,
    /// `s`: one message, then stay paused.
    Step,
}

/// Stdin in raw mode, when it is a terminal.
pub(super) struct Keys {
    saved: Option<libc::termios>,
}

impl Keys {
    /// Raw mode on stdin if it is a terminal (`enabled`); otherwise no keys are read.
    pub(super) fn new(enabled: bool) -> Keys {
        // SAFETY: isatty only inspects the descriptor.
        if !enabled || unsafe { libc::isatty(0) } != 1 {
            return Keys { saved: None };
        }
        // SAFETY: a zeroed termios is a valid value for tcgetattr to fill; the pointer is to
        // that local.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: fd 0 is a terminal (checked above); `t` is a valid termios to write into.
        if unsafe { libc::tcgetattr(0, &mut t) } != 0 {
            return Keys { saved: None };
        }
        let saved = t;
        t.c_lflag &= !(libc::ICANON | libc::ECHO);
        t.c_cc[libc::VMIN] = 0;
        t.c_cc[libc::VTIME] = 0;
        // SAFETY: fd 0 is a terminal; `t` is the settings just read, modified.
        if unsafe { libc::tcsetattr(0, libc::TCSANOW, &t) } != 0 {
            return Keys { saved: None };
        }
        Keys { saved: Some(saved) }
    }

    /// Whether keys are read.
    pub(super) fn active(&self) -> bool {
        self.saved.is_some()
    }

    /// The next key pressed, if any (never waits).
    pub(super) fn poll(&mut self) -> Option<Key> {
        self.saved?;
        let mut b = [0u8; 1];
        loop {
            // SAFETY: reads at most one byte into the local buffer; VMIN=0/VTIME=0 makes the
            // read return at once when nothing is pending.
            let n = unsafe { libc::read(0, b.as_mut_ptr().cast(), 1) };
            if n != 1 {
                return None;
            }
            match b[0] {
                b' ' => return Some(Key::Toggle),
                b's' | b'S' => return Some(Key::Step),
                _ => {}
            }
        }
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        if let Some(t) = self.saved {
            // SAFETY: restores the settings read from the same terminal in `new`.
            unsafe { libc::tcsetattr(0, libc::TCSANOW, &t) };
        }
    }
}
