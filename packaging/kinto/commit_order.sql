-- Kinto on PostgreSQL: record timestamps in commit order, per collection.
--
-- Kinto's trigger bump_timestamp() gives a row the collection's newest
-- committed timestamp plus one (or the clock, if later). Two transactions
-- writing the same collection at once both read the state before either
-- commits, so the one that stamps first may commit last: a client that
-- already read the later stamp asks `?_since=` past the earlier one and
-- never receives that record. (With equal stamps, the unique index on
-- (parent_id, resource_name, last_modified) rejects one of the writes.)
--
-- This trigger runs before Kinto's (triggers of one kind fire in the order
-- of their names) and takes a transaction-scoped advisory lock named after
-- the row's collection (parent_id, resource_name). A second writer of that
-- collection waits until the first commits or rolls back; Kinto's trigger
-- then reads a fresh snapshot that includes the first writer's rows, so its
-- stamp is higher, and it commits later. Writers of other collections do
-- not wait. The lock is released by PostgreSQL at commit or rollback,
-- whatever happens to the client (a killed worker included).
--
-- Apply after every `kinto migrate` (it does not touch Kinto's function, so
-- a migration that replaces bump_timestamp() keeps it, but a fresh database
-- needs it): psql -v ON_ERROR_STOP=1 -d "$KINTO_DSN" -f commit_order.sql
-- Running it again is harmless. See README.md beside it.

CREATE OR REPLACE FUNCTION lock_collection_for_timestamp() RETURNS trigger AS $$
BEGIN
    -- Two 32-bit keys: a hash collision only makes two collections share
    -- a lock (they then wait for each other), never breaks the ordering.
    PERFORM pg_advisory_xact_lock(hashtext(NEW.parent_id), hashtext(NEW.resource_name));
    RETURN NEW;
END;
$$ LANGUAGE plpgsql VOLATILE;

DROP TRIGGER IF EXISTS tgr_objects_commit_order ON objects;
-- "tgr_objects_commit_order" sorts before Kinto's "tgr_objects_last_modified".
CREATE TRIGGER tgr_objects_commit_order
BEFORE INSERT OR UPDATE OF data ON objects
FOR EACH ROW EXECUTE PROCEDURE lock_collection_for_timestamp();
