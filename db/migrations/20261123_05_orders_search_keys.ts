import type { Knex } from 'knex';

/**
 * The search index of the pages and the API, keyed by workspace. The trigram index of 20261123_01
 * (pg_trgm's `gin_trgm_ops`) keys each trigram alone, so a search in one shop walks posting lists
 * that span every shop, and the trigrams every order shares (the store's and the products' words,
 * and those a word starts or ends with) are read in full: 3 ms for a full name among 100,000
 * orders. Here an order's keys are the trigrams inside its words and the points where its
 * neighbouring words meet, each hashed with its workspace id: a search reads only its own shop's
 * lists, and only for a few keys of what was typed (see search_pattern_keys). `search_text LIKE`
 * stays the condition that decides; the keys only find the candidates, so a hash collision costs a
 * row read, never a wrong answer. The pg_trgm index stayed until 20261126_45_01 dropped it.
 *
 * Words are runs of characters other than ASCII spaces and punctuation, whatever the database's
 * locale: Arabic and accented letters are word characters everywhere. hashtext() is Postgres's
 * own text hash; if a major upgrade ever changed it, `REINDEX INDEX orders_search_keys_idx`.
 *
 * Built CONCURRENTLY (outside a transaction), so a release does not block orders being written.
 */
export const config = { transaction: false };

const WORD_SEPARATORS = String.raw`[\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+`;

export async function up(knex: Knex): Promise<void> {
  // An order's keys: every trigram inside each word, and for each two neighbouring words, where
  // they meet: the first one's last four characters and the next one's first four ("ryem bens" of
  // "meryem bensouda", "wiam el" of "wiam el amrani"). A meeting point is about as rare as the two
  // words together, where each trigram is as common as its word. PL/pgSQL: five times cheaper per
  // order than the same in SQL.
  await knex.raw(`
    CREATE OR REPLACE FUNCTION order_search_keys(workspace_id uuid, search_text text)
      RETURNS int[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
      DECLARE
        ws text := workspace_id::text;
        keys int[] := '{}';
        word text;
        previous text;
        n int;
      BEGIN
        FOREACH word IN ARRAY regexp_split_to_array(search_text, '${WORD_SEPARATORS}') LOOP
          n := length(word);
          CONTINUE WHEN n = 0;
          FOR i IN 1 .. n - 2 LOOP
            keys := keys || hashtext(ws || substr(word, i, 3));
          END LOOP;
          IF previous IS NOT NULL THEN
            keys := keys || hashtext(ws || right(previous, 4) || ' ' || left(word, 4));
          END IF;
          previous := word;
        END LOOP;
        RETURN keys;
      END $$`);
  // A search's keys, each one certain to be among the keys of any text that contains the search.
  // The search's first word may lack its start and its last word its end, so a meeting point
  // counts where each side is whole or has four characters. With such meeting points, they alone;
  // else trigrams that cover each word (at 1, 4, 7… and its last three characters). Empty when no
  // word has three characters.
  await knex.raw(`
    CREATE OR REPLACE FUNCTION search_pattern_keys(workspace_id uuid, pattern text)
      RETURNS int[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
      DECLARE
        ws text := workspace_id::text;
        words text[] := array_remove(regexp_split_to_array(pattern, '${WORD_SEPARATORS}'), '');
        last int := coalesce(array_length(words, 1), 0);
        meetings int[] := '{}';
        trigrams int[] := '{}';
        n int;
      BEGIN
        FOR w IN 1 .. last LOOP
          n := length(words[w]);
          IF w > 1 AND (w > 2 OR length(words[1]) >= 4) AND (w < last OR n >= 4) THEN
            meetings := meetings || hashtext(ws || right(words[w - 1], 4) || ' ' || left(words[w], 4));
          END IF;
          CONTINUE WHEN n < 3;
          FOR i IN 1 .. n BY 3 LOOP
            trigrams := trigrams || hashtext(ws || substr(words[w], least(i, n - 2), 3));
          END LOOP;
        END LOOP;
        RETURN CASE WHEN meetings <> '{}' THEN meetings ELSE trigrams END;
      END $$`);
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS orders_search_keys_idx');
  await knex.raw('CREATE INDEX CONCURRENTLY orders_search_keys_idx ON orders USING gin (order_search_keys(workspace_id, search_text))');
  // Orders are read a workspace at a time through indexes. Postgres cannot tell how rare a search
  // key is (it guesses a thousand rows), and for that many it would start parallel workers: about
  // 5 ms to read 50 rows.
  await knex.raw('ALTER TABLE orders SET (parallel_workers = 0)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE orders RESET (parallel_workers)');
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS orders_search_keys_idx');
  await knex.raw('DROP FUNCTION search_pattern_keys(uuid, text)');
  await knex.raw('DROP FUNCTION order_search_keys(uuid, text)');
}
