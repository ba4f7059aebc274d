import type { Knex } from 'knex';

/**
 * A search that starts with a short word ("42 rue mohammed", "el amrani") had no selective key:
 * the meeting point of its first two words needs four characters of the first one (it may be the
 * end of a longer word, "142 rue"), so only the later meeting points ("rue moha": every address)
 * or common trigrams were left, and the search read every order that has an address. Each order
 * now also has a short meeting key per pair of neighbouring words: the first one's last two
 * characters and the next one's first two ("~42 ru"), marked with `~` (never a word character) so
 * that it is never the same text as a long one. A search uses a short meeting key where the long
 * one is not certain: a first word of two or three characters, or a last word of two or three.
 *
 * order_search_keys changes first and the index is rebuilt before search_pattern_keys asks for
 * the new keys, so a search during the release never misses an order. Rebuilt CONCURRENTLY
 * (outside a transaction): orders keep being written meanwhile.
 */
export const config = { transaction: false };

const WORD_SEPARATORS = String.raw`[\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+`;

function orderSearchKeys(shortMeetings: boolean): string {
  return `
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
            keys := keys || hashtext(ws || right(previous, 4) || ' ' || left(word, 4));${
              shortMeetings
                ? `
            keys := keys || hashtext(ws || '~' || right(previous, 2) || ' ' || left(word, 2));`
                : ''
            }
          END IF;
          previous := word;
        END LOOP;
        RETURN keys;
      END $$`;
}

function searchPatternKeys(shortMeetings: boolean): string {
  // A meeting point is certain when each side is whole or long enough: a middle word is whole, the
  // first may lack its start and the last its end.
  const short = shortMeetings
    ? `
          ELSIF w > 1 AND (w > 2 OR length(words[1]) >= 2) AND (w < last OR n >= 2) THEN
            meetings := meetings || hashtext(ws || '~' || right(words[w - 1], 2) || ' ' || left(words[w], 2));`
    : '';
  return `
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
            meetings := meetings || hashtext(ws || right(words[w - 1], 4) || ' ' || left(words[w], 4));${short}
          END IF;
          CONTINUE WHEN n < 3;
          FOR i IN 1 .. n BY 3 LOOP
            trigrams := trigrams || hashtext(ws || substr(words[w], least(i, n - 2), 3));
          END LOOP;
        END LOOP;
        RETURN CASE WHEN meetings <> '{}' THEN meetings ELSE trigrams END;
      END $$`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(orderSearchKeys(true));
  await knex.raw('REINDEX INDEX CONCURRENTLY orders_search_keys_idx');
  await knex.raw(searchPatternKeys(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(searchPatternKeys(false));
  await knex.raw(orderSearchKeys(false));
  await knex.raw('REINDEX INDEX CONCURRENTLY orders_search_keys_idx');
}
