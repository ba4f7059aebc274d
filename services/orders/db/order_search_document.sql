CREATE OR REPLACE FUNCTION public.order_search_document(client_name text, store_name text, products_name text, phone text, external_ref text, city text, address text, note text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, translate(regexp_replace(concat_ws(' ', client_name, store_name, products_name, substr(phone, 5), external_ref, city, address, note), '[\u064B-\u065F\u0670\u0640]', '', 'g'), 'أإآٱ', 'اااا'))) $function$
