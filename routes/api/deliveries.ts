import { Router } from 'express';
import type { Services } from '../../services';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';
import { fileUpload, uploadedFile } from '../middleware/uploads';

/** /api/deliveries: a carrier's report in (multipart `file`, or the file as the body). */
export function deliveriesRouter(services: Services): Router {
  const router = Router();
  router.use(requireApiWorkspace);
  router.post('/import', fileUpload, async (req, res) => {
    const { bytes, name } = uploadedFile(req);
    const carrier = typeof req.body?.carrier === 'string' && !Buffer.isBuffer(req.body) ? req.body.carrier.trim().slice(0, 100) || null : null;
    const fileName = (name ?? req.get('X-File-Name') ?? 'report').slice(0, 200);
    const { unknownRows, ...answer } = await services.deliveries.reports.run(workspaceOf(req).workspace.id, bytes, { fileName, carrier });
    // The rows of unknown words are the result page's, to apply once the words are known: the API says the words only.
    res.json(answer);
  });
  return router;
}
