//! Names typed by a user (objectives, advantage estimators, and in `rltrain` studies, papers,
//! tasks): looked up in any case, and a typo gets the closest valid name ([`closest`]).

/// The candidate closest to `name` (in any case) by optimal-string-alignment distance, which
/// counts a swapped pair of neighbours as one edit (`dpgo` is one edit from `dgpo`, two from `pg`),
/// when it is close: at most a third of the longer name's characters differ, plus two.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let name = name.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::osa_distance(&name, &c.to_lowercase()), c))
        .filter(|&(d, c)| d > 0 && 3 * d <= name.chars().count().max(c.chars().count()) + 2)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// ` (did you mean `X`?)` for the closest candidate, or nothing.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(name, candidates).map_or_else(String::new, |s| format!(" (did you mean `{s}`?)"))
}

/// Serde of a named enum by its name: `serialize` writes `$name_fn` (`flag_name` by default),
/// `deserialize` reads through `from_name` (any case).
macro_rules! serde_by_name {
    ($ty:ty, $expected:literal) => {
        $crate::names::serde_by_name!($ty, $expected, name);
    };
    ($ty:ty, $expected:literal, $name_fn:ident) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.$name_fn())
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                struct Name;
                impl serde::de::Visitor<'_> for Name {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str($expected)
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<$ty, E> {
                        <$ty>::from_name(v).map_err(E::custom)
                    }
                }
                d.deserialize_str(Name)
            }
        }
    };
}
pub(crate) use serde_by_name;

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn a_swapped_pair_is_one_edit() {
        let names = ["pg", "grpo", "dgpo", "cpgd", "cfpo", "dapo"];
        assert_eq!(closest("dpgo", names), Some("dgpo"));
        assert_eq!(closest("dgop", names), Some("dgpo"));
        assert_eq!(closest("GRPOO", names), Some("grpo"));
        assert_eq!(closest("zzzzzzzz", names), None, "nothing close");
    }
}
