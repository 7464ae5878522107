// Package tenantdir is the one rule mapping a tenant's name to its
// directory under a state directory (the state directory itself for the
// default tenant, else tenants/<tenant>), with the name's checks and the
// refusal of a directory that is, on a case-insensitive filesystem, another
// spelling's. The file store, the PostgreSQL store's work directory and the
// CLI's --tenant all resolve through it, so neither store imports the
// other. It decides nothing about sessions and writes nothing.
package tenantdir
