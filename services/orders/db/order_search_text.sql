CREATE OR REPLACE FUNCTION public.order_search_text(client_name text, store_name text, products_name text, phone text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, client_name || ' ' || store_name || ' ' || products_name || ' ' || substr(phone, 5))) $function$
