//! What crosses between the store and its database: parameter and column
//! values as SQLite's five types ([`Value`]), the conversions to and from
//! Rust types, statement parameters ([`params!`]) and the database's
//! failures ([`DbError`]). Both connections ([`crate::db`] for SQLite,
//! [`crate::postgres`]) speak them.

/// A parameter or column value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// Database failures.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// SQLite reported an error.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL reported an error.
    #[error("postgresql: {}", postgres_reason(.0))]
    Postgres(#[from] postgres::Error),
    /// A transaction begun while one is open on the connection
    /// (PostgreSQL would only warn, and end the outer one early).
    #[error("a transaction is already open on this connection")]
    NestedTransaction,
    /// A one-row query found none.
    #[error("the query returned no row")]
    NoRow,
    /// A column held a value of another type than the one read.
    #[error("column {column}: expected {expected}, found {found}")]
    Type {
        column: usize,
        expected: &'static str,
        found: String,
    },
}

/// What can be passed as a statement parameter.
pub(crate) trait ToValue {
    /// The value passed.
    fn to_value(&self) -> Value;
}

/// What a column can be read as.
pub(crate) trait FromValue: Sized {
    /// The type's name, for errors.
    const NAME: &'static str;
    /// `value` as this type, or `value` back when it is of another type.
    fn from_value(value: Value) -> Result<Self, Value>;
}

/// A statement's parameters: a list of [`ToValue`]s (what [`params!`]
/// makes, `[]` for none) or of [`Value`]s built at run time.
pub(crate) trait Params {
    /// The values, in the order of their placeholders.
    fn values(&self) -> Vec<Value>;
}

impl<const N: usize> Params for [&dyn ToValue; N] {
    fn values(&self) -> Vec<Value> {
        self.iter().map(|p| p.to_value()).collect()
    }
}

impl Params for Vec<Value> {
    fn values(&self) -> Vec<Value> {
        self.clone()
    }
}

/// Statement parameters: `params![a, b]`.
macro_rules! params {
    () => { [] as [&dyn $crate::sql_value::ToValue; 0] };
    ($($p:expr),+ $(,)?) => { [$(&$p as &dyn $crate::sql_value::ToValue),+] };
}
pub(crate) use params;

/// `Result::optional`: a missing row as `None`.
pub(crate) trait Optional<T> {
    /// `Ok(None)` for [`DbError::NoRow`].
    fn optional(self) -> Result<Option<T>, DbError>;
}

impl<T> Optional<T> for Result<T, DbError> {
    fn optional(self) -> Result<Option<T>, DbError> {
        match self {
            Ok(v) => Ok(Some(v)),
            Err(DbError::NoRow) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// PostgreSQL's own message (with its detail) rather than the client's
/// summary of it.
fn postgres_reason(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_string(),
        },
        None => e.to_string(),
    }
}

impl ToValue for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Real(f) => ValueRef::Real(*f),
            Value::Text(t) => ValueRef::Text(t.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

macro_rules! int_values {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            fn to_value(&self) -> Value {
                Value::Int(i64::try_from(*self).unwrap_or(i64::MAX))
            }
        }
        impl FromValue for $t {
            const NAME: &'static str = "an integer";
            fn from_value(value: Value) -> Result<Self, Value> {
                match value {
                    Value::Int(i) => <$t>::try_from(i).map_err(|_| value),
                    v => Err(v),
                }
            }
        }
    )*};
}
int_values!(i64, i32, u32, u64, usize);

impl ToValue for bool {
    fn to_value(&self) -> Value {
        Value::Int(i64::from(*self))
    }
}

impl FromValue for bool {
    const NAME: &'static str = "a boolean";
    fn from_value(value: Value) -> Result<Self, Value> {
        match value {
            Value::Int(i) => Ok(i != 0),
            v => Err(v),
        }
    }
}

impl ToValue for f64 {
    fn to_value(&self) -> Value {
        Value::Real(*self)
    }
}

impl FromValue for f64 {
    const NAME: &'static str = "a number";
    fn from_value(value: Value) -> Result<Self, Value> {
        match value {
            Value::Real(f) => Ok(f),
            Value::Int(i) => Ok(i as f64),
            v => Err(v),
        }
    }
}

impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::Text(self.to_string())
    }
}

impl ToValue for String {
    fn to_value(&self) -> Value {
        Value::Text(self.clone())
    }
}

impl FromValue for String {
    const NAME: &'static str = "text";
    fn from_value(value: Value) -> Result<Self, Value> {
        match value {
            Value::Text(t) => Ok(t),
            v => Err(v),
        }
    }
}

impl ToValue for [u8] {
    fn to_value(&self) -> Value {
        Value::Blob(self.to_vec())
    }
}

impl ToValue for Vec<u8> {
    fn to_value(&self) -> Value {
        Value::Blob(self.clone())
    }
}

impl FromValue for Vec<u8> {
    const NAME: &'static str = "bytes";
    fn from_value(value: Value) -> Result<Self, Value> {
        match value {
            Value::Blob(b) => Ok(b),
            v => Err(v),
        }
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::Null, ToValue::to_value)
    }
}

impl<T: FromValue> FromValue for Option<T> {
    const NAME: &'static str = T::NAME;
    fn from_value(value: Value) -> Result<Self, Value> {
        match value {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}
