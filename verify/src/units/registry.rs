//! The table of units: uom's SI units of the quantities below, and the scale units uom lacks.
//!
//! Built once, on first use. Each unit is found by its abbreviation as written (`mm` is not
//! `Mm`), and by its singular and plural ignoring case, also in British spelling (`metres`,
//! `litre`). A name two units of different meaning share is kept by the first, in the order of
//! [`QUANTITIES`] (so `minutes` is time, not angle). Abbreviations of the extreme prefixes
//! (yotta- to exa-, atto- to yocto-) are left out: `as`, `am`, `Em` are words first.

use super::{Kind, Unit, UnitId};
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::str::FromStr;
use std::sync::{LazyLock, RwLock};

/// The registry.
/// Names are hashed with FNV-1a: the table is fixed, and every word after a value is looked up.
type Names<V> = HashMap<String, V, BuildHasherDefault<rlbase::Fnv1a>>;

struct Registry {
    units: Vec<Unit>,
    by_name: Names<UnitId>,
    /// What a rate of two quantities measures, read from uom's own rates (`kilometer per hour`
    /// is a velocity, so a length per time is one): (numerator's, denominator's, the
    /// denominator's power) to the rate's quantity.
    rate_kinds: HashMap<(Kind, Kind, u8), Kind>,
}

/// The uom quantities read, in order of precedence for shared names.
macro_rules! quantities {
    ($($module:ident :: $Quantity:ident),* $(,)?) => {
        /// Every unit of the listed quantities: (abbreviation, singular, plural, quantity, factor, affine).
        fn uom_units() -> Vec<(&'static str, &'static str, &'static str, &'static str, f64, bool)> {
            let mut out = Vec::new();
            $(
                for u in uom::si::$module::units() {
                    let at = |v: &str| uom::si::f64::$Quantity::from_str(&format!("{v} {}", u.singular())).ok().map(|q| q.value);
                    let (Some(one), Some(zero)) = (at("1"), at("0")) else { continue };
                    out.push((u.abbreviation(), u.singular(), u.plural(), uom::si::$module::description(), one - zero, zero != 0.0));
                }
            )*
            out
        }
        /// The quantity names read, for the tests.
        #[cfg(test)]
        const QUANTITIES: &[&str] = &[$(stringify!($module)),*];
    };
}

quantities!(
    length::Length,
    mass::Mass,
    time::Time,
    area::Area,
    volume::Volume,
    velocity::Velocity,
    acceleration::Acceleration,
    force::Force,
    energy::Energy,
    power::Power,
    pressure::Pressure,
    frequency::Frequency,
    angle::Angle,
    angular_velocity::AngularVelocity,
    thermodynamic_temperature::ThermodynamicTemperature,
    electric_current::ElectricCurrent,
    electric_potential::ElectricPotential,
    electrical_resistance::ElectricalResistance,
    electric_charge::ElectricCharge,
    capacitance::Capacitance,
    information::Information,
    amount_of_substance::AmountOfSubstance,
    mass_density::MassDensity,
    volume_rate::VolumeRate,
    luminous_intensity::LuminousIntensity,
    torque::Torque,
    ratio::Ratio,
);

/// Money, which uom does not carry: the dollar and the cent (quantity [`MONEY`]).
const MONEY_UNITS: &[(&[&str], f64)] =
    &[(&["dollar", "dollars", "usd", "$", "\\$"], 1.0), (&["cent", "cents", "¢", "\\cent", "\\textcent"], 0.01)];

/// The quantity of money; a gold without a unit counts it in dollars.
pub(crate) const MONEY: &str = "money";

/// Other currencies, each its own quantity (no exchange rate converts one into another, so `42
/// EUR` never answers `\$42`): a gold without a unit drops one as it drops any unit of measure.
/// Names, ISO codes and the signs the normalizer does not already drop.
const CURRENCIES: &[(&[&str], &str)] = &[
    (&["euro", "euros", "eur"], "money (euro)"),
    (&["gbp"], "money (pound sterling)"),
    (&["yen", "jpy"], "money (yen)"),
    (&["yuan", "cny", "rmb", "renminbi"], "money (yuan)"),
    (&["rupee", "rupees", "inr", "₹"], "money (rupee)"),
    (&["chf", "franc", "francs"], "money (franc)"),
    (&["peso", "pesos", "mxn"], "money (peso)"),
    (&["ruble", "rubles", "rouble", "roubles", "rub", "₽"], "money (ruble)"),
    (&["krw", "₩"], "money (won)"),
];

/// Whether a unit is a currency (the dollar, the cent, or one of [`CURRENCIES`]).
pub(crate) fn is_currency(id: UnitId) -> bool {
    matches!(id.unit().kind, Kind::Measure(q) if q.starts_with(MONEY))
}

/// Number words that scale a value, which uom does not carry either.
const SCALE_UNITS: &[(&[&str], f64)] = &[
    (&["dozen", "dozens"], 12.0),
    (&["gross"], 144.0),
    (&["hundred", "hundreds"], 100.0),
    (&["thousand", "thousands"], 1e3),
    (&["million", "millions"], 1e6),
    (&["billion", "billions"], 1e9),
    (&["trillion", "trillions"], 1e12),
];

/// Calendar units of time that uom does not carry, in seconds (a month is a twelfth of uom's
/// 365-day year, a decade ten of them).
const CALENDAR_UNITS: &[(&[&str], f64)] = &[
    (&["week", "weeks", "wk", "wks"], 604_800.0),
    (&["fortnight", "fortnights"], 1_209_600.0),
    (&["month", "months"], 2_628_000.0),
    (&["decade", "decades"], 315_360_000.0),
    (&["century", "centuries"], 3_153_600_000.0),
    (&["millennium", "millennia"], 31_536_000_000.0),
];

/// Spellings of registry units that uom does not list: (spelling, the registry name). A quart
/// or a pint without a qualifier is the US liquid one, as the US gallon is uom's `gallon`.
const SPELLINGS: &[(&str, &str)] = &[
    ("quart", "liquid quart"),
    ("quarts", "liquid quarts"),
    ("qt", "liquid quart"),
    ("qts", "liquid quarts"),
    ("pint", "liquid pint"),
    ("pints", "liquid pints"),
    ("hr", "hour"),
    ("hrs", "hours"),
    ("sec", "second"),
    ("secs", "seconds"),
    ("yr", "year"),
    ("yrs", "years"),
    ("mph", "mile per hour"),
    ("kph", "kilometer per hour"),
    ("kmh", "kilometer per hour"),
    ("kmph", "kilometer per hour"),
    ("rpm", "revolution per minute"),
];

/// Prefixes whose abbreviations are not read (they spell words: `as`, `am`, `Em`, `Pm`).
const EXTREME_PREFIXES: &[&str] = &["yotta", "zetta", "exa", "atto", "zepto", "yocto", "exb", "yobi", "zebi"];

static REGISTRY: LazyLock<Registry> = LazyLock::new(build);

fn build() -> Registry {
    let mut r = Registry { units: Vec::new(), by_name: Names::default(), rate_kinds: HashMap::new() };
    // Abbreviations ignoring case come after every exact spelling (`Mm` never takes `mm`).
    let mut abbreviations = Vec::new();
    for (abbreviation, singular, plural, quantity, factor, affine) in uom_units() {
        if singular.is_empty() || singular.contains('(') {
            continue;
        }
        let id = UnitId(u16::try_from(r.units.len()).expect("fewer than 65536 units"));
        r.units.push(Unit { name: singular.to_string(), kind: Kind::Measure(quantity), factor, affine });
        let extreme = EXTREME_PREFIXES.iter().any(|p| singular.starts_with(p));
        // `kW · h` is written `kWh` or `kW·h` after a value.
        let compact = abbreviation.replace(" · ", "");
        if !extreme && !compact.is_empty() && !compact.contains(['(', ' ']) {
            if compact != abbreviation {
                r.add(abbreviation.replace(" · ", "·"), id);
            }
            r.add(compact.clone(), id);
            let typed_first = compact.starts_with(|c: char| c.is_lowercase());
            abbreviations.push((compact.to_lowercase(), id, !typed_first));
        }
        for name in [singular, plural] {
            let lower = name.to_lowercase();
            r.add(lower.replace("meter", "metre").replace("liter", "litre"), id);
            r.add(lower, id);
        }
    }
    let currencies = CURRENCIES.iter().map(|(names, quantity)| ((*names, 1.0), Kind::Measure(quantity)));
    let tables = MONEY_UNITS
        .iter()
        .map(|&u| (u, Kind::Measure(MONEY)))
        .chain(currencies)
        .chain(CALENDAR_UNITS.iter().map(|&u| (u, Kind::Measure(uom::si::time::description()))))
        .chain(SCALE_UNITS.iter().map(|&u| (u, Kind::Scale)));
    for ((names, factor), kind) in tables {
        let id = UnitId(u16::try_from(r.units.len()).expect("fewer than 65536 units"));
        r.units.push(Unit { name: names[0].to_string(), kind, factor, affine: false });
        for n in names {
            r.add(n.to_string(), id);
        }
    }
    // `ml` is `mL` (a lower-case first letter, as typed), not `ML`.
    abbreviations.sort_by_key(|&(_, _, upper_first)| upper_first);
    for (lower, id, _) in abbreviations {
        r.add(lower, id);
    }
    for (spelling, name) in SPELLINGS {
        if let Some(&id) = r.by_name.get(*name) {
            r.add(spelling.to_string(), id);
        }
    }
    r.rate_kinds = rate_kinds(&r);
    r
}

/// The quantity of every rate uom names, by the quantities of its two units: `kilometer per
/// hour` (velocity) gives length per time, `meter per second squared` (acceleration) length per
/// time to the power 2.
fn rate_kinds(r: &Registry) -> HashMap<(Kind, Kind, u8), Kind> {
    let mut out = HashMap::new();
    for unit in &r.units {
        let Some((top, bottom)) = unit.name.split_once(" per ") else { continue };
        let (bottom, power) = bottom.strip_suffix(" squared").map_or((bottom, 1), |b| (b, 2));
        let kind_of = |name: &str| r.by_name.get(name).map(|id| r.units[usize::from(id.0)].kind);
        if let (Some(a), Some(b)) = (kind_of(top), kind_of(bottom)) {
            out.entry((a, b, power)).or_insert(unit.kind);
        }
    }
    out
}

/// Rates composed from two units of the registry that uom does not name (`m/h`, `\$/kg`,
/// `GB/s`), made on first use: each is a unit whose quantity is the one uom gives such a rate
/// (`m/h` is a velocity, so it converts to `km/h`), or the pair's own when uom has none (money
/// per mass). Bounded, so that no input can grow it without end: past the bound a rate uom does
/// not name is no unit.
struct Composites {
    units: Vec<&'static Unit>,
    by_parts: HashMap<(UnitId, UnitId, u8), UnitId>,
}

/// Most composed rates kept.
const MAX_COMPOSITES: usize = 4096;

static COMPOSITES: LazyLock<RwLock<Composites>> =
    LazyLock::new(|| RwLock::new(Composites { units: Vec::new(), by_parts: HashMap::new() }));

/// The rate `top` per `bottom` (to `power`): uom's unit of that name, else a composed one.
/// `None` for a scale unit, a unit with an offset, or two units of one quantity (`m/km` is a
/// ratio, not a unit).
fn compose(r: &Registry, top: UnitId, bottom: UnitId, power: u8) -> Option<UnitId> {
    let (a, b) = (unit(top), unit(bottom));
    let squared = if power == 2 { " squared" } else { "" };
    if let Some(id) = r.get(&format!("{} per {}{squared}", a.name, b.name)) {
        return Some(id);
    }
    if a.affine || b.affine || a.kind == b.kind || !matches!((a.kind, b.kind), (Kind::Measure(_), Kind::Measure(_))) {
        return None;
    }
    if let Some(&id) = COMPOSITES.read().ok()?.by_parts.get(&(top, bottom, power)) {
        return Some(id);
    }
    let mut c = COMPOSITES.write().ok()?;
    if let Some(&id) = c.by_parts.get(&(top, bottom, power)) {
        return Some(id);
    }
    if c.units.len() >= MAX_COMPOSITES {
        return None;
    }
    let kind = match r.rate_kinds.get(&(a.kind, b.kind, power)) {
        Some(k) => *k,
        None => {
            let (Kind::Measure(qa), Kind::Measure(qb)) = (a.kind, b.kind) else { return None };
            Kind::Measure(Box::leak(format!("{qa} per {qb}{squared}").into_boxed_str()))
        }
    };
    let factor = a.factor / b.factor.powi(i32::from(power));
    let leaked: &'static Unit =
        Box::leak(Box::new(Unit { name: format!("{} per {}{squared}", a.name, b.name), kind, factor, affine: false }));
    let id = UnitId(u16::try_from(r.units.len() + c.units.len()).ok()?);
    c.units.push(leaked);
    c.by_parts.insert((top, bottom, power), id);
    Some(id)
}

impl Registry {
    /// Adds a name; the first unit to take a name keeps it.
    fn add(&mut self, name: String, id: UnitId) {
        self.by_name.entry(name).or_insert(id);
    }

    /// A unit by its exact spelling, else ignoring case (`Kilograms`, `KG`).
    fn get(&self, name: &str) -> Option<UnitId> {
        if let Some(&id) = self.by_name.get(name) {
            return Some(id);
        }
        let upper = name.chars().any(char::is_uppercase);
        upper.then(|| self.by_name.get(&name.to_lowercase()).copied()).flatten()
    }
}

/// The unit a phrase names: a registry name (`km`, `kilometres`, `square feet`), `sq`/`square`/
/// `cubic` before a length or `^2`/`²`/`^3`/`³` after one (`m^2`, `sq ft`), or a plural `s`
/// added to an abbreviation (`kgs`, `lbs`). `None` for anything else.
pub(crate) fn lookup(phrase: &str) -> Option<UnitId> {
    let r = &*REGISTRY;
    let phrase = phrase.trim();
    if phrase.is_empty() || phrase.len() > 48 {
        return None;
    }
    if !phrase.contains([' ', '~', '^', '²', '³', '/']) {
        // One word (the common case, read for every word after a value): no rewriting.
        return r.get(phrase).or_else(|| plural_of_abbreviation(r, phrase));
    }
    let words: Vec<&str> = phrase.split(|c: char| c.is_whitespace() || c == '~').filter(|w| !w.is_empty()).collect();
    let phrase = words.join(" ");
    if phrase.is_empty() || phrase.len() > 48 {
        return None;
    }
    let powered = phrase
        .replace("^{2}", "²")
        .replace("^{3}", "³")
        .replace("^2", "²")
        .replace("^3", "³")
        .replace(" ²", "²")
        .replace(" ³", "³");
    let squared = powered
        .strip_prefix("sq. ")
        .or_else(|| powered.strip_prefix("sq "))
        .or_else(|| powered.strip_prefix("square "))
        .map(|rest| format!("square {rest}"));
    for candidate in [Some(powered.clone()), squared].into_iter().flatten() {
        if let Some(id) = r.get(&candidate) {
            return Some(id);
        }
        // `square ft` and `ft²` for `square foot`: the length's own name.
        for prefix in ["square ", "cubic "] {
            if let Some(length) = candidate.strip_prefix(prefix) {
                if let Some(id) = r.get(length) {
                    let unit = &r.units[usize::from(id.0)];
                    if let Some(&whole) = r.by_name.get(&format!("{prefix}{}", unit.name)) {
                        return Some(whole);
                    }
                }
            }
        }
        if let Some(id) = plural_of_abbreviation(r, &candidate).or_else(|| rate(r, &candidate)) {
            return Some(id);
        }
    }
    None
}

/// Whether `word` is the first word of a unit's name of several words (`square`, `miles` in
/// `miles per hour`, `degrees` in `degrees Fahrenheit`, `fluid`).
pub(crate) fn starts_longer_unit(word: &str) -> bool {
    type Words = HashSet<String, BuildHasherDefault<rlbase::Fnv1a>>;
    static FIRST_WORDS: LazyLock<Words> = LazyLock::new(|| {
        let mut out: Words =
            REGISTRY.by_name.keys().filter_map(|k| k.split_once(' ').map(|(w, _)| w.to_string())).collect();
        out.extend(["sq", "sq.", "square", "cubic"].map(String::from));
        out
    });
    FIRST_WORDS.contains(word)
        || (word.bytes().any(|c| c.is_ascii_uppercase()) && FIRST_WORDS.contains(&word.to_ascii_lowercase()))
}

/// `km/hr`, `metres per second`: a rate spelled through the names of its two units
/// (`kilometer per hour`), when the registry has that rate.
fn rate(r: &Registry, phrase: &str) -> Option<UnitId> {
    let (top, bottom) = phrase.split_once('/').or_else(|| phrase.split_once(" per "))?;
    let bottom = bottom.trim();
    let (bottom, power) = match bottom.strip_suffix('²').or_else(|| bottom.strip_suffix(" squared")) {
        Some(b) => (b.trim(), 2),
        None => (bottom, 1),
    };
    compose(r, lookup(top.trim())?, lookup(bottom)?, power)
}

/// `kgs`, `lbs`: an abbreviation with a plural `s`.
fn plural_of_abbreviation(r: &Registry, word: &str) -> Option<UnitId> {
    let stem = word.strip_suffix('s').filter(|s| s.len() >= 2 && !s.contains(' '))?;
    r.get(stem)
}

/// Whether a single word is a unit; a one-letter word (`m`, `g`, `s`) only `in_text`, since a bare
/// letter after a number is a product (`2 n`), and so are the words that are also functions or
/// sets (`min`, `sec`, `in`).
pub fn is_unit_word(w: &str, in_text: bool) -> bool {
    let word_only = w.chars().count() == 1 || matches!(w, "min" | "sec" | "in" | "max" | "pm" | "am" | "ms");
    (in_text || !word_only)
        && (lookup(w).is_some() || is_rate_abbreviation(w) || matches!(w, "unit" | "units" | "square" | "sq" | "cubic"))
}

/// `wpm`, `bpm`, `fps`: a thing per second, minute or hour, spelled as initials (`<x>p<t>`). It
/// names a rate of something uom does not count, and never changes the value.
fn is_rate_abbreviation(w: &str) -> bool {
    let b = w.as_bytes();
    (3..=4).contains(&b.len())
        && b.iter().all(|c| c.is_ascii_alphabetic())
        && b[b.len() - 2].eq_ignore_ascii_case(&b'p')
        && matches!(b[b.len() - 1].to_ascii_lowercase(), b's' | b'm' | b'h')
}

/// The unit at `id`: of the registry, or a composed rate.
pub(super) fn unit(id: UnitId) -> &'static Unit {
    let (i, fixed) = (usize::from(id.0), &REGISTRY.units);
    if i < fixed.len() {
        return &fixed[i];
    }
    let composites = COMPOSITES.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    composites.units[i - fixed.len()]
}

/// Whether `index` is a registry index or a composed rate's.
pub(super) fn exists(index: u16) -> bool {
    let (i, fixed) = (usize::from(index), REGISTRY.units.len());
    i < fixed || COMPOSITES.read().is_ok_and(|c| i - fixed < c.units.len())
}

#[cfg(test)]
mod tests {
    use super::{is_currency, is_unit_word, lookup, QUANTITIES};
    use crate::units::Kind;

    fn name(phrase: &str) -> Option<String> {
        lookup(phrase).map(|id| id.unit().name.clone())
    }

    #[test]
    fn every_listed_quantity_has_units() {
        for q in QUANTITIES {
            assert!(super::REGISTRY.units.iter().any(|u| matches!(u.kind, Kind::Measure(_))), "{q}");
        }
        assert!(super::REGISTRY.units.len() > 500);
    }

    #[test]
    fn spellings_of_answers_find_their_unit() {
        for (phrase, unit) in [
            ("kgs", "kilogram"),
            ("Kilograms", "kilogram"),
            ("lbs", "pound"),
            ("metres", "meter"),
            ("square metres", "square meter"),
            ("m²", "square meter"),
            ("m^2", "square meter"),
            ("sq ft", "square foot"),
            ("cm^3", "cubic centimeter"),
            ("km/h", "kilometer per hour"),
            ("km/hr", "kilometer per hour"),
            ("metres per second", "meter per second"),
            ("ft/sec", "foot per second"),
            ("mph", "mile per hour"),
            ("ml", "milliliter"),
            ("hrs", "hour"),
            ("minutes", "minute"),
            ("cents", "cent"),
            ("dozen", "dozen"),
            ("°C", "degree Celsius"),
            ("quarts", "liquid quart"),
            ("pint", "liquid pint"),
            ("months", "month"),
            ("weeks", "week"),
            ("decades", "decade"),
        ] {
            assert_eq!(name(phrase).as_deref(), Some(unit), "{phrase}");
        }
        for word in [
            "apples", "the", "answer", "or", "as", "am", "less", "about", "and", "not", "to", "on", "by", "of", "than",
            "most", "least", "more", "maybe", "perhaps", "nearly", "around", "so", "is", "it", "no", "if", "be", "we",
        ] {
            assert_eq!(name(word), None, "{word}");
        }
    }

    #[test]
    fn bare_letters_are_units_only_in_text() {
        assert!(is_unit_word("m", true) && !is_unit_word("m", false));
        assert!(is_unit_word("kg", false) && is_unit_word("wpm", true) && is_unit_word("units", false));
        assert!(!is_unit_word("in", false) && !is_unit_word("apples", true));
    }

    #[test]
    fn rates_uom_does_not_name_are_composed_with_its_quantity() {
        let m_per_h = lookup("m/h").expect("m/h");
        assert_eq!(m_per_h.unit().name, "meter per hour");
        assert_eq!(m_per_h.unit().kind, lookup("km/h").unwrap().unit().kind);
        assert_eq!(lookup("meters per hour"), Some(m_per_h));
        assert_eq!(lookup("m/hr"), Some(m_per_h));
        let f = |a: &str, b: &str| crate::units::conversion(lookup(a).unwrap(), lookup(b).unwrap());
        assert_eq!(format!("{}", f("km/h", "m/h").unwrap()), "1000");
        assert_eq!(format!("{}", f("cm/s²", "m/s^2").unwrap()), "1/100");
        assert!(f("dollars/kg", "cents/kg").is_some() && f("dollars/kg", "dollars/m").is_none());
        assert_eq!(lookup("kWh").unwrap().unit().name, "kilowatt hour");
        assert!(lookup("m/km").is_none() && lookup("dozen/h").is_none() && lookup("°C/min").is_none());
    }

    #[test]
    fn factors_relate_units_exactly_or_to_six_digits() {
        let f = |a: &str, b: &str| crate::units::conversion(lookup(a).unwrap(), lookup(b).unwrap());
        assert_eq!(format!("{}", f("m", "cm").unwrap()), "100");
        assert_eq!(format!("{}", f("ft", "in").unwrap()), "12");
        assert_eq!(format!("{}", f("hours", "minutes").unwrap()), "60");
        assert!(f("kg", "m").is_none());
        assert!(f("°C", "K").is_none());
        assert!(f("dollars", "cents").is_some());
        // Each currency is its own quantity: no exchange rate converts one into another.
        assert!(f("EUR", "euros").is_some() && f("euros", "dollars").is_none() && f("yen", "CHF").is_none());
        assert!(is_currency(lookup("USD").unwrap()) && is_currency(lookup("eur").unwrap()));
        assert!(!is_currency(lookup("km").unwrap()));
    }
}
