//! The index's database on PostgreSQL (team mode): a synchronous client
//! running the store's SQL. The store writes SQLite's dialect; here its
//! placeholders (`?1`, `?`) become PostgreSQL's (`$1`), and values cross
//! as [`Value`]s, encoded for whatever type PostgreSQL inferred for a
//! parameter and decoded from whatever type a column has. SQLite's
//! functions the SQL calls (`json_extract`, `json_each`,
//! `json_group_array`, `glob`) are defined by the first migration
//! (`migrations-postgres/V001__init.sql`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::error::Error;

use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};

use crate::sql_value::{DbError, Value};

/// A connection to PostgreSQL with its prepared statements.
pub(crate) struct Pg {
    client: RefCell<postgres::Client>,
    statements: RefCell<HashMap<String, postgres::Statement>>,
}

impl Pg {
    /// Connect to the database at `url` (`postgres://…` or a key=value
    /// string), without TLS (a database in the cluster's network, or
    /// on this machine's socket).
    pub(crate) fn connect(url: &str) -> Result<Pg, DbError> {
        let client = postgres::Client::connect(url, postgres::NoTls)?;
        Ok(Pg {
            client: RefCell::new(client),
            statements: RefCell::default(),
        })
    }

    /// `sql` prepared (once per connection).
    fn statement(&self, sql: &str) -> Result<postgres::Statement, DbError> {
        if let Some(stmt) = self.statements.borrow().get(sql) {
            return Ok(stmt.clone());
        }
        let stmt = self.client.borrow_mut().prepare(&dialect(sql))?;
        self.statements
            .borrow_mut()
            .insert(sql.to_string(), stmt.clone());
        Ok(stmt)
    }

    /// Run `sql`; the rows it changed.
    pub(crate) fn execute(&self, sql: &str, values: &[Value]) -> Result<usize, DbError> {
        let stmt = self.statement(sql)?;
        let params: Vec<&(dyn ToSql + Sync)> =
            values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
        Ok(self.client.borrow_mut().execute(&stmt, &params)? as usize)
    }

    /// Run statements without parameters.
    pub(crate) fn batch(&self, sql: &str) -> Result<(), DbError> {
        Ok(self.client.borrow_mut().batch_execute(sql)?)
    }

    /// Each row of `sql`'s result, as values, handed to `f` as it
    /// arrives. `f` must not use this connection.
    pub(crate) fn query_each<E: From<DbError>>(
        &self,
        sql: &str,
        values: &[Value],
        mut f: impl FnMut(&[Value]) -> Result<(), E>,
    ) -> Result<(), E> {
        let stmt = self.statement(sql)?;
        let mut client = self.client.borrow_mut();
        let mut rows = client
            .query_raw(&stmt, values.iter())
            .map_err(DbError::from)?;
        let mut row_values = Vec::new();
        while let Some(row) = rows.next().map_err(DbError::from)? {
            row_values.clear();
            for i in 0..row.len() {
                row_values.push(row.try_get::<_, Column>(i).map_err(DbError::from)?.0);
            }
            f(&row_values)?;
        }
        Ok(())
    }
}

/// `sql` with SQLite's placeholders (`?N`, `?`) as PostgreSQL's (`$N`),
/// outside quoted text.
pub(crate) fn dialect(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut chars = sql.chars().peekable();
    let mut quote: Option<char> = None;
    let mut next = 1;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '?') => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    chars.next();
                }
                if digits.is_empty() {
                    digits = next.to_string();
                }
                next = digits.parse::<usize>().unwrap_or(next) + 1;
                out.push('$');
                out.push_str(&digits);
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match (self, ty) {
            (Value::Null, _) => Ok(IsNull::Yes),
            (Value::Int(i), &Type::BOOL) => (*i != 0).to_sql(ty, out),
            (Value::Int(i), &Type::INT2) => i16::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), &Type::INT4) => i32::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), &Type::INT8) => i.to_sql(ty, out),
            (Value::Int(i), &Type::FLOAT8) => (*i as f64).to_sql(ty, out),
            (Value::Int(i), &Type::TEXT | &Type::VARCHAR) => i.to_string().to_sql(ty, out),
            (Value::Real(f), &Type::FLOAT8) => f.to_sql(ty, out),
            (Value::Real(f), &Type::FLOAT4) => (*f as f32).to_sql(ty, out),
            (Value::Text(t), &Type::JSONB) => {
                out.extend_from_slice(&[1]);
                out.extend_from_slice(t.as_bytes());
                Ok(IsNull::No)
            }
            (Value::Text(t), &Type::JSON) => {
                out.extend_from_slice(t.as_bytes());
                Ok(IsNull::No)
            }
            (Value::Text(t), _) if <&str as ToSql>::accepts(ty) => t.as_str().to_sql(ty, out),
            (Value::Blob(b), &Type::BYTEA) => b.as_slice().to_sql(ty, out),
            (value, ty) => Err(format!("cannot pass {value:?} as a {ty} parameter").into()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// A column read as a [`Value`], whatever its PostgreSQL type.
struct Column(Value);

impl<'a> FromSql<'a> for Column {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Column, Box<dyn Error + Sync + Send>> {
        Ok(Column(match *ty {
            Type::BOOL => Value::Int(i64::from(bool::from_sql(ty, raw)?)),
            Type::INT2 => Value::Int(i64::from(i16::from_sql(ty, raw)?)),
            Type::INT4 => Value::Int(i64::from(i32::from_sql(ty, raw)?)),
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f64::from(f32::from_sql(ty, raw)?)),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::BYTEA => Value::Blob(raw.to_vec()),
            Type::JSONB => Value::Text(String::from_utf8(raw.get(1..).unwrap_or(&[]).to_vec())?),
            Type::JSON => Value::Text(String::from_utf8(raw.to_vec())?),
            ref ty if <String as FromSql>::accepts(ty) => Value::Text(String::from_sql(ty, raw)?),
            ref ty => return Err(format!("a column of type {ty} cannot be read").into()),
        }))
    }

    fn from_sql_null(_: &Type) -> Result<Column, Box<dyn Error + Sync + Send>> {
        Ok(Column(Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_become_numbered_outside_quotes() {
        assert_eq!(
            super::dialect("SELECT '?1', \"a?\" FROM t WHERE a = ?1 AND b IN (?, ?) OR c = ?12"),
            "SELECT '?1', \"a?\" FROM t WHERE a = $1 AND b IN ($2, $3) OR c = $12"
        );
    }
}
