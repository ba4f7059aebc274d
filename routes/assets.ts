import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Router } from 'express';

export interface Assets {
  /** The URL of a file of public/, with its content hash: `app.css` → `/assets/app.3f9c2a1b0d.css`. */
  url(name: string): string;
  router: Router;
}

const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * Static files under URLs that change with their content, hashed once at start: a browser keeps
 * each for a year and asks again only when a new version links a new URL. An old or unknown hash
 * answers 404, never a stale file under a live name. The plain name still answers, briefly cached,
 * for links made outside our pages.
 */
export function staticAssets(dir: string): Assets {
  const byName = new Map<string, string>();
  const byHashed = new Map<string, string>();
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name);
    if (!fs.statSync(file).isFile()) continue;
    const hash = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex').slice(0, 10);
    const ext = path.extname(name);
    const hashed = `${path.basename(name, ext)}.${hash}${ext}`;
    byName.set(name, hashed);
    byHashed.set(hashed, name);
  }
  const router = Router();
  router.get('/:file', (req, res, next) => {
    const hashedName = byHashed.get(req.params.file);
    if (hashedName) {
      res.sendFile(path.join(dir, hashedName), { headers: { 'Cache-Control': IMMUTABLE }, cacheControl: false, lastModified: false });
      return;
    }
    if (byName.has(req.params.file)) {
      res.sendFile(path.join(dir, req.params.file), { maxAge: '1h' });
      return;
    }
    next();
  });
  return {
    url: (name) => {
      const hashed = byName.get(name);
      if (!hashed) throw new Error(`no asset named ${name} in ${dir}`);
      return `/assets/${hashed}`;
    },
    router,
  };
}
