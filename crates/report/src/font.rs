//! The one font every plot uses, embedded in the binary (DejaVu Sans,
//! assets/DejaVuSans.LICENSE), so PNGs render the same everywhere with no
//! system font library.

use plotters::style::FontStyle;
use std::sync::Once;

/// The family name plots ask for.
pub const FAMILY: &str = "sans-serif";

static DEJAVU_SANS: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Register the font with plotters (once; later calls do nothing).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if plotters::style::register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS).is_err() {
            // The bytes are compiled in and checked by a test: this cannot
            // happen unless the asset is replaced by something broken.
            panic!("the embedded font does not parse");
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_embedded_font_parses() {
        super::register();
    }
}
