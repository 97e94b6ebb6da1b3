use std::ffi::CStr;
use std::fmt;
use std::io;

/// `Result<T, sup::Error>`.
pub type Result<T> = std::result::Result<T, Error>;

/// Which part of a spawn failed, as the library reports it.
///
/// With [`Error::code`] it tells a missing program ([`Part::Exec`]) from a
/// missing working directory ([`Part::Cwd`]), both `NotFound`.
///
/// ```
/// let err = sup::Command::new("/no/such/program").spawn().unwrap_err();
/// assert_eq!(err.part(), Some(sup::Part::Exec));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Part {
    /// The spec: a bad key or value (for example a NUL byte in an argument).
    Spec,
    /// The program: not found in `PATH`, not executable, not an executable
    /// format, a directory, or arguments plus environment too large.
    Exec,
    /// The working directory.
    Cwd,
    /// The host or kernel: out of descriptors, processes or memory.
    System,
}

impl Part {
    pub(crate) fn from_raw(part: i32) -> Option<Part> {
        match part {
            sup_sys::SUP_PART_SPEC => Some(Part::Spec),
            sup_sys::SUP_PART_EXEC => Some(Part::Exec),
            sup_sys::SUP_PART_CWD => Some(Part::Cwd),
            sup_sys::SUP_PART_SYSTEM => Some(Part::System),
            _ => None,
        }
    }
}

/// An error from libsup: its code (a negative errno, `sup_sys::SUP_E*`), the
/// part of a spawn that failed, and the library's human detail.
///
/// ```
/// let err = sup::Command::new("/no/such/program").spawn().unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
/// assert_eq!(err.code(), sup_sys::SUP_ENOENT);
/// assert!(err.to_string().contains("/no/such/program"));
/// let io: std::io::Error = err.into();
/// assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
/// assert_eq!(io.raw_os_error(), Some(libc::ENOENT));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: i32,
    part: Option<Part>,
    detail: String,
}

impl Error {
    pub(crate) fn new(code: i32, part: Option<Part>, detail: String) -> Error {
        Error { code, part, detail }
    }

    pub(crate) fn from_code(code: i32) -> Error {
        Error { code, part: None, detail: String::new() }
    }

    /// The library's code: a negative errno value such as
    /// `sup_sys::SUP_ENOENT` (-2).
    ///
    /// ```
    /// let err = sup::Command::new("/no/such/program").spawn().unwrap_err();
    /// assert_eq!(err.code(), -2);
    /// ```
    pub fn code(&self) -> i32 {
        self.code
    }

    /// The closest [`io::ErrorKind`]: `NotFound` for a missing program or
    /// directory, `PermissionDenied`, `InvalidInput` for a bad spec (an
    /// interior NUL), and so on, as std maps the same errno.
    ///
    /// ```
    /// let err = sup::Command::new("echo").arg("a\0b").spawn().unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    /// ```
    pub fn kind(&self) -> io::ErrorKind {
        if (-4095..0).contains(&self.code) {
            io::Error::from_raw_os_error(-self.code).kind()
        } else {
            io::ErrorKind::Other
        }
    }

    /// Which part of a spawn failed; `None` for errors not from a spawn.
    ///
    /// ```
    /// let err = sup::Command::new("true").current_dir("/no/such/dir").spawn().unwrap_err();
    /// assert_eq!(err.part(), Some(sup::Part::Cwd));
    /// ```
    pub fn part(&self) -> Option<Part> {
        self.part
    }

    /// The library's detail, e.g. `exec "frobnicate": not found in PATH`;
    /// empty when it gave none.
    ///
    /// ```
    /// let err = sup::Command::new("frobnicate-xyz").spawn().unwrap_err();
    /// assert!(err.detail().starts_with("exec "));
    /// ```
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// True for a program that was not found (as opposed to a missing
    /// working directory).
    ///
    /// ```
    /// assert!(sup::Command::new("frobnicate-xyz").spawn().unwrap_err().is_program_not_found());
    /// ```
    pub fn is_program_not_found(&self) -> bool {
        self.code == sup_sys::SUP_ENOENT && self.part == Some(Part::Exec)
    }

    /// `sup_strerror` of the code: "no such file or directory", ...
    ///
    /// ```
    /// let err = sup::Command::new("/no/such/program").spawn().unwrap_err();
    /// assert!(!err.description_of_code().is_empty());
    /// ```
    pub fn description_of_code(&self) -> &'static str {
        // SAFETY: sup_strerror returns a static NUL-terminated string for any code.
        unsafe { CStr::from_ptr(sup_sys::sup_strerror(self.code)) }.to_str().unwrap_or("unknown error")
    }
}

impl fmt::Display for Error {
    /// The library's detail when it gave one (it names the cause:
    /// `sup: exec "frobnicate": not found in PATH`), else the code's
    /// description: `sup: no such file or directory (-2)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.detail.is_empty() {
            write!(f, "sup: {} ({})", self.description_of_code(), self.code)
        } else {
            write!(f, "sup: {}", self.detail)
        }
    }
}

impl std::error::Error for Error {}

impl From<Error> for io::Error {
    /// An OS error for an errno code, as std reports the same failure
    /// (`raw_os_error()` is `Some(errno)`, the message is the OS's, without
    /// the library's detail); a bad spec ([`Part::Spec`]) or a code that is
    /// not an errno is an `io::Error` wrapping the `sup::Error`
    /// (`get_ref()` / `into_inner()` give it back).
    ///
    /// ```
    /// let io: std::io::Error = sup::Command::new("echo").arg("a\0b").spawn().unwrap_err().into();
    /// assert_eq!(io.kind(), std::io::ErrorKind::InvalidInput);
    /// assert!(io.get_ref().unwrap().downcast_ref::<sup::Error>().is_some());
    /// ```
    fn from(e: Error) -> io::Error {
        if e.part != Some(Part::Spec) && (-4095..0).contains(&e.code) {
            io::Error::from_raw_os_error(-e.code)
        } else {
            io::Error::new(e.kind(), e)
        }
    }
}

/// Maps a C return value: negative is an error, anything else is returned.
pub(crate) fn cvt(rc: i32) -> Result<i32> {
    if rc < 0 { Err(Error::from_code(rc)) } else { Ok(rc) }
}
