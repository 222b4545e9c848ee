#include <sqlite3.h>

/// Turns off double-quoted string literals ("x" is an identifier only), as GRDB did:
/// sqlite3_db_config is variadic, which Swift cannot call.
static inline void csqlite_disable_double_quoted_strings(sqlite3 *db) {
    sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0);
}
